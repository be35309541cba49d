# Docker half of scripts/services.sh (sourced): dockerd under the state directory, and the local
# seqkit image imported from a root filesystem assembled on this machine, pinned by its id.

docker_answers() { docker -H "unix://$DOCKER_SOCK" info --format '{{.ServerVersion}}' >/dev/null 2>&1; }

docker_up() {
  if docker_answers; then
    owned dockerd || echo "docker: a dockerd not started by this script answers at $DOCKER_SOCK; using it"
  else
    mkdir -p "$STATE/docker"
    echo "docker: starting dockerd"
    # No bridge and no iptables: Helix runs containers with --network none only.
    start_daemon dockerd dockerd --iptables=false --ip6tables=false --bridge=none \
      --data-root "$STATE/docker/data" --exec-root "$STATE/docker/exec" \
      --pidfile "$STATE/run/own/dockerd.pid" -H "unix://$DOCKER_SOCK"
    wait_for dockerd 90 docker_answers
  fi
  build_image
}

# A rootfs of busybox-static, seqkit and the libraries ldd lists, imported without any pull. The
# image carries a label keyed on its inputs, so a second `up` reuses it instead of importing again.
build_image() {
  local seqkit_bin inputs key existing root id version
  seqkit_bin="$(command -v seqkit)"
  inputs="recipe=$IMAGE_RECIPE busybox-static=$(pkg_version busybox-static) seqkit=$(pkg_version seqkit) libc6=$(pkg_version libc6)"
  key="$(printf '%s' "$inputs" | sha256sum | cut -c1-64)"
  existing="$(docker -H "unix://$DOCKER_SOCK" image inspect "$IMAGE" \
    --format '{{.Id}} {{index .Config.Labels "org.helix.inputs"}}' 2>/dev/null || true)"
  if [ "${existing#* }" = "$key" ] && [ -f "$STATE/images.json" ]; then
    return 0
  fi
  root="$(mktemp -d)"
  mkdir -p "$root/bin" "$root/usr/bin" "$root/etc" "$root/tmp" "$root/work"
  cp /bin/busybox "$root/bin/busybox"
  for applet in $("$root/bin/busybox" --list); do
    [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
  done
  cp "$seqkit_bin" "$root/usr/bin/seqkit"
  # Static binaries have no ldd lines with paths; dynamic ones bring their loader and libraries.
  for lib in $(ldd "$seqkit_bin" 2>/dev/null | grep -o '/[^ ]*' || true); do
    mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' > "$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
  chmod 1777 "$root/tmp"
  id="$(tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$root" -c . |
    docker -H "unix://$DOCKER_SOCK" import -c 'USER 65534:65534' -c 'CMD ["/bin/sh"]' \
      -c "LABEL org.helix.inputs=$key" - "$IMAGE")"
  rm -rf "$root"
  version="$(docker -H "unix://$DOCKER_SOCK" run --rm --network none "$id" seqkit version | tr -d '\r\n')"
  cat > "$STATE/images.json" <<EOF
{
  "images": [
    {
      "name": "$IMAGE",
      "id": "$id",
      "user": "65534:65534",
      "contents": "/bin/busybox (busybox-static), /usr/bin/seqkit and the libraries ldd lists",
      "inputs": "$inputs",
      "seqkitVersion": "$version"
    }
  ]
}
EOF
  echo "docker: built $IMAGE $id ($version), recorded in $STATE/images.json"
}

docker_status() {
  local v id=""
  if v="$(docker -H "unix://$DOCKER_SOCK" info --format '{{.ServerVersion}}' 2>&1)"; then
    [ -f "$STATE/images.json" ] && id="$(grep -o '"id": "[^"]*"' "$STATE/images.json" | cut -d'"' -f4)"
    echo "docker: up (dockerd $v at $DOCKER_SOCK; $IMAGE ${id:-not built})"
  else
    echo "docker: down (nothing answers at $DOCKER_SOCK: $(printf '%s' "$v" | grep -v '^$' | head -n 1))"
    return 1
  fi
}

docker_down() { stop_daemon dockerd; }
