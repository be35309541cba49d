// Privileged checks of docker.run on the real engine, through a real guest and broker: the
// container's confinement, its results bounded, leftovers swept after a crash, and hostile outputs
// refused when they are read back (ABI-DOCKER-*).
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import { helixHostName, LABEL_HOST, LABEL_PID, LABEL_RUN } from '../../../capabilities/docker-container.js';
import { expect, type Check, type CheckEnv, type PolicyDocument } from '../../check.js';
import { answersOf, containersCreated, containersLeft, eventsSince, scriptPack, setEnv } from '../../kit/priv-kit.js';
import { ABSENT, currentImage, dockerWork, image, policyWith, script, sh } from './shared.js';

// The real engine: docker.run through a real guest and broker.
const dockerRealPolicy = (env: CheckEnv): PolicyDocument =>
  policyWith(env, {
    grants: { 'd.tool': ['docker.run'] },
    docker: {
      images: [currentImage(), ABSENT],
      tools: { 'd.tool': {} },
      ceilings: {
        memoryBytes: 128 * 1024 * 1024,
        pids: 32,
        tmpfsBytes: 8 * 1024 * 1024,
        timeoutMs: 60_000,
        maxOutputFileBytes: 4096,
        maxStdoutBytes: 65536,
      },
    },
  });

/** The checks of this file, in the report's order. */
export const dockerRunChecks: readonly Check[] = [
  {
    id: 'privileged.docker-confinement',
    title: 'A container tries to be root, write its root, reach the network, keep capabilities, fork without end and eat memory',
    category: 'privileged',
    abi: ['ABI-DOCKER-005'],
    engines: ['container'],
    services: ['docker'],
    expected:
      'the process is uid:gid 65534:65534 with only lo, a read-only root and a writable /tmp, CapEff and CapBnd 0, NoNewPrivs 1; forks past pids fail; passing memory_bytes is oom_killed; argv[0] is the entrypoint; an allowlisted image the engine lacks is P-PRECOND-DOCKER-IMAGE-MISSING',
    policy: (_e, env) => dockerRealPolicy(env),
    packs: () => [scriptPack('d.tool', ['docker.run'])],
    async run(ctx) {
      const img = await image();
      dockerWork(ctx);
      const probe =
        'id -u; id -g; ls /sys/class/net | tr "\\n" " "; echo; touch /probe 2>/dev/null && echo root=rw || echo root=ro; echo x > /tmp/ok && echo tmp=rw; grep -E "^(CapEff|CapBnd|NoNewPrivs)" /proc/self/status';
      const answers = answersOf(
        await script(ctx, 'd.tool', 'docker.run', [
          { image: img, argv: sh(probe) },
          {
            image: img,
            argv: sh('for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 30 & done; echo started'),
            limits: { pids: 6, timeout_ms: 15_000 },
          },
          { image: img, argv: sh('x=$(head -c 200m /dev/zero | tr "\\0" a); echo survived'), limits: { memory_bytes: 32 * 1024 * 1024 } },
          { image: img, argv: ['seqkit', 'version'] },
          { image: ABSENT, argv: ['/bin/true'] },
        ]),
      );
      const [conf, forks, hog, entry, missing] = answers.map((a) => a.capability_result?.result);
      const lines = String(conf?.stdout ?? '').split('\n');
      ctx.observe('probe', lines);
      expect(
        JSON.stringify(lines) ===
          JSON.stringify([
            '65534',
            '65534',
            'lo ',
            'root=ro',
            'tmp=rw',
            'CapEff:\t0000000000000000',
            'CapBnd:\t0000000000000000',
            'NoNewPrivs:\t1',
            '',
          ]),
        `the container is not confined as ABI-DOCKER-005 says: ${JSON.stringify(lines)}`,
      );
      expect(
        /can't fork|Resource temporarily unavailable/.test(String(forks?.stderr)),
        `forks past pids did not fail: ${JSON.stringify(forks)}`,
      );
      expect(
        hog?.oom_killed === true && !String(hog?.stdout).includes('survived'),
        `a container past memory_bytes was not killed: ${JSON.stringify(hog)}`,
      );
      expect(
        entry?.exit_code === 0 && /^seqkit v2\./.test(String(entry?.stdout)),
        `argv[0] was not the entrypoint: ${JSON.stringify(entry)}`,
      );
      expect(
        answers[4]!.error?.code === 'P-PRECOND-DOCKER-IMAGE-MISSING' && missing === undefined,
        `an image the engine lacks: ${JSON.stringify(answers[4])}`,
      );
      ctx.observe('pids_stderr', String(forks?.stderr).slice(0, 200));
      ctx.observe('oom_killed', hog?.oom_killed);
    },
  },
  {
    id: 'privileged.docker-result-bounds',
    title: 'A container floods stdout, writes binary, exits non-zero, outlives its timeout; each is bounded and its container removed',
    category: 'privileged',
    abi: ['ABI-DOCKER-006', 'ABI-DOCKER-007'],
    engines: ['container'],
    services: ['docker'],
    expected:
      'stdout cut at max_stdout_bytes with stdout_truncated; binary stdout base64; a non-zero exit is a result; at timeout_ms the container is killed (exit_code null, timed_out); every container carries helix.run_id, helix.tool, helix.host, helix.pid and none is left after the call',
    policy: (_e, env) => dockerRealPolicy(env),
    packs: () => [scriptPack('d.tool', ['docker.run'])],
    async run(ctx) {
      const img = await image();
      const work = dockerWork(ctx);
      const host = await ctx.host();
      // Labels, seen while a container of the call runs.
      let labels: Record<string, string> | undefined;
      let watching = true;
      const watcher = (async () => {
        const docker = new Docker();
        while (watching && labels === undefined) {
          const found = await docker.listContainers({
            all: true,
            filters: { label: [`${LABEL_HOST}=${helixHostName()}`, 'helix.tool=d.tool'] },
          });
          labels = found[0]?.Labels;
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      const since = eventsSince();
      const r = await script(ctx, 'd.tool', 'docker.run', [
        { image: img, argv: sh('yes helix | head -c 100000'), limits: { max_stdout_bytes: 1000 } },
        { image: img, argv: sh('printf "\\377\\376\\000\\001"') },
        { image: img, argv: sh('echo out; echo oops >&2; exit 3') },
        { image: img, argv: ['/bin/busybox', 'sleep', '600'], limits: { timeout_ms: 1500 } },
      ]);
      watching = false;
      await watcher;
      const results = answersOf(r).map((a) => a.capability_result?.result);
      const [flood, binary, failed, late] = results;
      expect(
        flood?.stdout_truncated === true && flood.stdout.length === 1000 && flood.exit_code === 0,
        `stdout was not cut at max_stdout_bytes: ${JSON.stringify(flood).slice(0, 300)}`,
      );
      expect(
        binary?.stdout_encoding === 'base64' && Buffer.from(binary.stdout, 'base64').equals(Buffer.from([0xff, 0xfe, 0, 1])),
        `binary stdout was not base64: ${JSON.stringify(binary)}`,
      );
      expect(
        failed?.exit_code === 3 && failed.stdout === 'out\n' && failed.stderr === 'oops\n',
        `a non-zero exit is not a plain result: ${JSON.stringify(failed)}`,
      );
      expect(late?.timed_out === true && late.exit_code === null, `the container was not killed at timeout_ms: ${JSON.stringify(late)}`);
      const created = await containersCreated(r.run_id!, since);
      const left = await containersLeft(r.run_id!);
      ctx.observe('containers_created', created);
      ctx.observe('containers_left', left);
      ctx.observe('labels', labels);
      expect(created === 4, `the engine created ${created} containers for the run, not 4`);
      expect(left === 0, `${left} containers of the run are left on the engine`);
      expect(
        labels !== undefined &&
          labels[LABEL_RUN] === r.run_id &&
          labels['helix.tool'] === 'd.tool' &&
          labels[LABEL_HOST] === helixHostName() &&
          labels[LABEL_PID] === String(process.pid),
        `the container's labels: ${JSON.stringify(labels)}`,
      );
      expect(readdirSync(work).length === 0, `workspaces were left: ${readdirSync(work).join(', ')}`);
      void host;
    },
  },
  {
    id: 'privileged.docker-leftover-sweep',
    title: "A host's start sweeps containers and workspaces a dead Helix process left, and never a live process's or another host's",
    category: 'privileged',
    abi: ['ABI-DOCKER-007'],
    engines: ['container'],
    services: ['docker'],
    expected:
      "the start's sweep removes the container labelled with this host and a dead pid and the workspace named after the dead pid; the live process's container and workspace and another host's container stay",
    policy: (_e, env) => dockerRealPolicy(env),
    packs: () => [scriptPack('d.tool', ['docker.run'])],
    async run(ctx) {
      const img = await image();
      const work = dockerWork(ctx);
      const name = `helix-conformance-${path.basename(ctx.env.dir)}`;
      setEnv(ctx, 'HELIX_HOST_NAME', name);
      const docker = new Docker();
      const dead = 2 ** 22 + 1; // above Linux's pid_max: no process has it
      const labels = (host: string, pid: number) => ({
        [LABEL_HOST]: host,
        [LABEL_PID]: String(pid),
        [LABEL_RUN]: 'run_conformance_sweep',
        'helix.tool': 'd.tool',
      });
      const leftover = await docker.createContainer({ Image: img, Cmd: ['seqkit', 'version'], Labels: labels(name, dead) });
      const live = await docker.createContainer({ Image: img, Cmd: ['seqkit', 'version'], Labels: labels(name, process.pid) });
      const other = await docker.createContainer({ Image: img, Cmd: ['seqkit', 'version'], Labels: labels(`${name}-other`, dead) });
      ctx.defer(async () => {
        for (const c of [leftover, live, other]) await c.remove({ force: true }).catch(() => undefined);
      });
      mkdirSync(path.join(work, `${dead}-crashed`, 'out'), { recursive: true });
      mkdirSync(path.join(work, `${process.pid}-running`));
      const host = await ctx.host();
      const swept = await host.dockerSweep;
      ctx.observe('swept', swept);
      expect(
        swept !== undefined && JSON.stringify(swept.containers) === JSON.stringify([leftover.id]),
        `the sweep removed ${JSON.stringify(swept?.containers)}, not only the leftover ${leftover.id}`,
      );
      expect(
        JSON.stringify(swept!.workspaces) === JSON.stringify([`${dead}-crashed`]),
        `the sweep removed workspaces ${JSON.stringify(swept!.workspaces)}`,
      );
      const exists = async (c: Docker.Container) =>
        c.inspect().then(
          () => true,
          () => false,
        );
      expect(!(await exists(leftover)), 'the leftover container is still there');
      expect((await exists(live)) && (await exists(other)), "the sweep removed a live process's or another host's container");
      expect(existsSync(path.join(work, `${process.pid}-running`)), "the sweep removed a live process's workspace");
    },
  },
  {
    id: 'privileged.docker-hostile-outputs',
    title:
      'A container leaves a symbolic link to /etc/passwd, a FIFO, a directory, an oversized file, and half an output before its timeout',
    category: 'privileged',
    abi: ['ABI-DOCKER-008', 'ABI-DOCKER-009'],
    engines: ['container'],
    services: ['docker'],
    expected:
      'each hostile output fails the docker.run with S-TOOL-DOCKER-OUTPUT (details.file and details.reason) and nothing of it is read; an output written before a timeout is missing, not registered; in/ and meta/ are read-only, out/ belongs to 65534; the workspace is removed every time',
    policy: (_e, env) => dockerRealPolicy(env),
    packs: () => [scriptPack('d.tool', ['docker.run'], { declaredOutputs: [{ role: 'any', type: 'binary' }] })],
    async run(ctx) {
      const img = await image();
      const work = dockerWork(ctx);
      const host = await ctx.host();
      const reads = (await host.artifacts.importInline('>a\nACGT\n', { label: 'reads' })).id;
      const out = [{ file: 'x', role: 'any' }];
      const cases: Array<[string, RegExp]> = [
        ['ln -s /etc/passwd out/x', /symbolic link/],
        ['mkfifo out/x', /FIFO/],
        ['mkdir out/x', /directory/],
        ['head -c 5000 /dev/zero > out/x', /5000 bytes, over docker\.ceilings\.maxOutputFileBytes \(4096\)/],
      ];
      const calls = [
        ...cases.map(([c]) => ({ image: img, argv: sh(c), outputs: out, inputs: [{ name: 'reads.fa', artifact_id: reads }] })),
        { image: img, argv: sh('echo partial > out/x; sleep 600'), outputs: out, limits: { timeout_ms: 1500 } },
        {
          image: img,
          argv: sh(
            'for p in /work/in/x /work/meta/x /work/x /x; do touch $p 2>/dev/null && echo "$p=rw" || echo "$p=ro"; done; ls -nd /work/out | awk "{print \\$3}"',
          ),
          inputs: [{ name: 'reads.fa', artifact_id: reads }],
        },
        // The run must create its declared output to succeed: a last call seals it.
        { image: img, argv: sh('echo sealed > out/x'), outputs: [{ file: 'x', role: 'any', type: 'binary' }] },
      ];
      const r = await script(ctx, 'd.tool', 'docker.run', calls);
      const answers = answersOf(r);
      const reasons: string[] = [];
      for (const [i, [command, reason]] of cases.entries()) {
        const a = answers[i]!;
        reasons.push(
          `${command} -> ${a.error?.code ?? 'ok'}: ${a.error?.details?.reason ?? JSON.stringify(a.capability_result?.result?.outputs)}`,
        );
        expect(
          a.error?.code === 'S-TOOL-DOCKER-OUTPUT' && a.error.details.file === 'x' && reason.test(String(a.error.details.reason)),
          `${command}: expected S-TOOL-DOCKER-OUTPUT /${reason.source}/, got ${JSON.stringify(a)}`,
        );
      }
      ctx.observe('reasons', reasons);
      const late = answers[4]!.capability_result?.result;
      expect(
        late?.timed_out === true && late.outputs.length === 0 && JSON.stringify(late.missing_outputs) === '["x"]',
        `an output written before the timeout was read: ${JSON.stringify(late)}`,
      );
      const probe = String(answers[5]!.capability_result?.result?.stdout ?? '').split('\n');
      ctx.observe('workspace_probe', probe);
      expect(
        JSON.stringify(probe.slice(0, 5)) === JSON.stringify(['/work/in/x=ro', '/work/meta/x=ro', '/work/x=ro', '/x=ro', '65534']),
        `the workspace mounts are not as ABI-DOCKER-008 says: ${JSON.stringify(probe)}`,
      );
      // The run itself has no `any` output registered from the refused calls.
      const run = host.runs.get(r.run_id!);
      ctx.observe('run_outputs', run?.outputs);
      expect(readdirSync(work).length === 0, `workspaces were left: ${readdirSync(work).join(', ')}`);
    },
  },
];
