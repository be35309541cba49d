// The error taxonomy (abi/ABI.md, "Error taxonomy") as data: classes, stable codes, messages, hints.
// Documentation (ABI.md's error table) is generated from this file and checked in CI.

/** The nine error classes. The prefix of every code names its class. */
export const ERROR_CLASSES = {
  'I-REQ': { meaning: 'Invalid request: schema violations, missing fields, bad types.', status: 'invalid_request', retryable: false },
  'A-AUTH': { meaning: 'Authorization: the policy or an allowlist refuses it.', status: 'terminal_error', retryable: false },
  'P-PRECOND': { meaning: 'A precondition is not met (missing resource, bad configuration).', status: 'terminal_error', retryable: false },
  'R-TIMEOUT': {
    meaning: 'The deadline passed. Retryable only for pure and idempotent tools.',
    status: 'retryable_error',
    retryable: true,
  },
  'R-UPSTREAM': { meaning: 'A transient upstream failure. Retry with backoff.', status: 'retryable_error', retryable: true },
  'R-CAP': { meaning: 'Capacity or rate limit. Retry after `retry_after_ms`.', status: 'retryable_error', retryable: true },
  'S-TOOL': {
    meaning: 'The tool faulted. Faults of a sandboxed guest are deterministic, so a retry cannot help unless marked retryable.',
    status: 'terminal_error',
    retryable: false,
  },
  'C-CONTRACT': {
    meaning: 'Contract mismatch between caller and tool (unknown tool, version, output shape).',
    status: 'terminal_error',
    retryable: false,
  },
  'D-DATA': {
    meaning: 'Data integrity or quality violation (checksum mismatch, malformed content).',
    status: 'terminal_error',
    retryable: false,
  },
} as const;

export type ErrorClass = keyof typeof ERROR_CLASSES;

/** One entry of the taxonomy. `retryable` overrides the class default where set. */
export interface ErrorSpec {
  readonly message: string;
  readonly hint: string;
  readonly retryable?: boolean;
}

/** Every error code the host itself produces. Codes are stable: never renamed, never reused. */
export const ERROR_CODES = {
  'I-REQ-ENVELOPE': {
    message: 'The request envelope is malformed.',
    hint: 'Fix the fields listed in details.violations; see abi/schemas/request-envelope.json.',
  },
  'I-REQ-JSON': {
    message: 'The input is not valid JSON.',
    hint: 'Pass a JSON object, e.g. --input \'{"sequence":"ACGT"}\'.',
  },
  'I-REQ-JSON-DEPTH': {
    message: 'The request nests arrays and objects deeper than the host accepts.',
    hint: 'Send an input of at most 64 levels of arrays and objects (ABI-JSON-001); details.pointer names where it went deeper.',
  },
  'I-REQ-JSON-NUMBER': {
    message: 'The request holds a number the host cannot carry exactly: not finite, or an integer beyond ±(2^53-1).',
    hint: 'Send large integers (and decimals that must stay exact) as strings (ABI-JSON-003); details.pointer names the number.',
  },
  'I-REQ-JSON-VALUE': {
    message: 'The request holds something that is not JSON data the host can carry.',
    hint: 'Send plain JSON: objects, arrays, Unicode strings, finite numbers, booleans, null; no member named __proto__ (ABI-JSON-004, ABI-JSON-005). details.pointer names the value.',
  },
  'I-REQ-INPUT': {
    message: "The input does not match the tool's input schema.",
    hint: "Fix the fields listed in details.violations; `helix tools --json` shows each tool's inputSchema.",
  },
  'I-REQ-TOO-LARGE': {
    message: 'The data is larger than the limit.',
    hint: "Import a smaller file, or raise the policy's ceilings.maxImportBytes.",
  },
  'I-REQ-IDEMPOTENCY-CONFLICT': {
    message: 'The idempotency key was already used for a different request.',
    hint: 'Use a new idempotency_key for a different request; reuse a key only to retry the same one.',
  },
  'I-REQ-CAPABILITY-ARGS': {
    message: "The capability call's arguments do not match the capability's schema.",
    hint: 'Fix the arguments listed in details.violations; abi/ABI.md lists each capability.',
  },
  'I-REQ-BULK-CAPABILITY': {
    message: 'This capability is not served through capability_call_bulk.',
    hint: 'Only artifact.read and artifact.write go through helix_v1.capability_call_bulk; call every other capability through helix_v1.capability_call (ABI-BULK-002).',
  },
  'I-REQ-INPUT-SIZE': {
    message: 'The input is larger than the tool accepts.',
    hint: 'Send less data inline, or import it as an artifact and pass its id.',
  },
  'I-REQ-HTTP-URL': {
    message: 'The URL cannot be requested: it does not parse, is not http or https, or carries a user name or password.',
    hint: 'Pass an absolute http:// or https:// URL without user:password@; send credentials in a header instead.',
  },
  'I-REQ-HTTP-HEADER': {
    message: 'A request header is refused: the host sets it itself, or it is malformed, or there are too many.',
    hint: 'Drop Host, Content-Length, Transfer-Encoding and hop-by-hop headers (Connection, Upgrade, TE, ...); names must be HTTP tokens and values free of CR, LF and NUL.',
  },
  'I-REQ-HTTP-BODY': {
    message: 'The request body cannot be sent.',
    hint: 'Send a body only with POST, PUT, PATCH or DELETE, and give valid base64 when body_encoding is base64.',
  },
  'I-REQ-TOOLPACK-NAME': {
    message: 'The toolpack name cannot be used.',
    hint: 'Start with a letter and use letters, digits and single hyphens or underscores between them, e.g. hello-tool.',
  },
  'I-REQ-TOOL-ID': {
    message: 'The tool id is not dotted lowercase segments.',
    hint: 'Pass --id with lowercase segments joined by dots, each starting with a letter, e.g. --id seq.my_tool.',
  },
  'I-REQ-TARGET-NOT-EMPTY': {
    message: 'The target directory exists and is not empty.',
    hint: 'Choose another name or --dir, or remove the directory first.',
  },
  'I-REQ-MCP-PARSE': {
    message: 'The MCP message is not JSON: the line does not parse, or is not UTF-8.',
    hint: 'Send one JSON-RPC 2.0 message per line, as UTF-8 JSON ending in a newline, with no line break inside it.',
  },
  'I-REQ-MCP-MESSAGE-TOO-LARGE': {
    message: 'The MCP message is longer than the server accepts.',
    hint: 'Import large data as an artifact (artifact_import) and pass its id, or start the server with a larger --max-message-bytes.',
  },
  'I-REQ-MCP-INVALID-MESSAGE': {
    message: 'The MCP message is not a JSON-RPC 2.0 request, notification or response.',
    hint: 'Send an object with "jsonrpc": "2.0", a string "method", an "id" that is a string or an integer (left out for a notification) and an object "params".',
  },
  'I-REQ-MCP-BATCH': {
    message: 'The MCP message is a batch array; MCP 2025-06-18 and later have no batching.',
    hint: 'Send each request or notification as a line of its own.',
  },
  'I-REQ-MCP-METHOD': {
    message: 'The MCP server has no method of that name.',
    hint: 'Call one of the methods listed in details.methods; tools are called through tools/call with the tool name in params.name.',
  },
  'I-REQ-MCP-PARAMS': {
    message: "The MCP request's params do not match the method.",
    hint: "Fix the fields listed in details.violations; the MCP schema (revision 2025-11-25) defines each method's params.",
  },
  'I-REQ-DOCKER-IMAGE-REF': {
    message: 'The image is named by a tag, which can change; docker.run runs only an image id or a digest.',
    hint: 'Name the image as sha256:<64 hex> (`docker image inspect --format {{.Id}} IMAGE`) or repository@sha256:<64 hex> (ABI-DOCKER-001).',
  },
  'I-REQ-SLURM-VALUE': {
    message: 'A value for the job script has a newline, a NUL, #SBATCH, or a character outside the strict set its field allows.',
    hint: 'details.field names the value and details.problem what is wrong; names and comments take letters, digits and _ . : = + @ , - only, paths are absolute and plain (ABI-SLURM-004).',
  },
  'I-REQ-DOCKER-WORKSPACE-NAME': {
    message: "A name in docker.run's workspace (an input in in/ or an output file in out/) is not a plain file name.",
    hint: 'Name each input and output with 1 to 128 of the characters A-Z a-z 0-9 . _ - , starting with a letter, digit or _ (no path separator, no .., no leading dot or dash; ABI-DOCKER-008). details.pointer names the entry.',
  },
  'I-REQ-DOCKER-WORKSPACE-COLLISION': {
    message: "Two entries of docker.run's workspace would be the same file, or two outputs the same role.",
    hint: 'Give every input and every output file its own name (names differing only in case collide too), and every output its own role (ABI-DOCKER-008). details names both entries.',
  },
  'I-REQ-CONTAINER-ARG': {
    message: "A value for a container tool's argv placeholder could be read as more than one argument's worth of data.",
    hint: 'Pass a value without shell metacharacters, control characters, a leading dash or a .. path segment (ABI-CONTAINER-004); details.pointer names the parameter.',
  },
  'I-REQ-JOB-BUNDLE': {
    message: 'The job or result bundle cannot be read: a file is missing, too large, not JSON, or not of the bundle format.',
    hint: 'Write job bundles with `helix job submit` (or `helix job bundle`) and let `helix job run` write the result; details name the file and what is wrong (ABI-FANOUT-001).',
  },
  'I-REQ-JOB-ARRAY': {
    message:
      "The fan-out request is malformed: the pointer names no artifact field of the tool's input, or the artifacts to fan out over are missing or repeated.",
    hint: "Pass --over with the JSON pointer of an x-helix-artifact field of the tool's input (e.g. /sequences) and one or more distinct artifact ids (ABI-FANOUT-007).",
  },
  'I-REQ-SLURM-FILE-NAME': {
    message:
      "A file name in the job's directory (an input in in/, a declared output in out/) is not a plain file name, or two of them are the same.",
    hint: 'Name each file with letters, digits and _ . - (not starting with . or -, at most 128), every input name different and every output name different, also in case (ABI-SLURM-007).',
  },
  'A-AUTH-TOOL-DENIED': {
    message: 'The policy does not allow this tool.',
    hint: "Add the tool id to the policy's tools.allow list.",
  },
  'A-AUTH-CAPABILITY-NOT-GRANTED': {
    message: 'The tool asks for capabilities the policy does not grant it.',
    hint: "Grant the capabilities in the policy's grants for this tool, or remove them from the manifest.",
  },
  'A-AUTH-PATH-OUTSIDE-ROOTS': {
    message: "The path is outside the policy's import or export roots.",
    hint: "Move the file under one of the roots in details.roots, or add a root to the policy's paths.",
  },
  'A-AUTH-SYMLINK': {
    message: 'The path is or goes through a symbolic link, which the import and export boundaries refuse.',
    hint: 'Pass the real path of the file (realpath), not a link to it.',
  },
  'A-AUTH-FORBIDDEN': {
    message: 'forbidden',
    hint: "Add the capability to the manifest's capabilities.allow and grant it in the policy.",
  },
  'A-AUTH-HTTP-ORIGIN': {
    message: "The URL's origin is not allowed by both the tool's manifest and the policy.",
    hint: "Add the origin (scheme://host:port) to the manifest's capabilities.network and the policy's network.allow.",
  },
  'A-AUTH-HTTP-PRIVATE-ADDRESS': {
    message: 'The host is or resolves to a private, loopback, link-local or other non-public address.',
    hint: "If the tool really must reach it, add the host or the address (or its CIDR range) to the policy's network.allowPrivate.",
  },
  'A-AUTH-HTTP-REDIRECT': {
    message: 'The server redirected to a destination that http.request refuses.',
    hint: 'Request an allowed URL directly, or allow the redirect target (details.to) the way details.refused says.',
  },
  'A-AUTH-SECRET-WRITE': {
    message: 'The write carries the value of a secret the run received (raw or encoded), and the policy refuses to store it.',
    hint: "Keep secrets out of kv, artifacts, logs and outputs: use the value only where it is meant to go (an http.request to an allowed origin). details name the secret, the capability, the path and the encoding; the policy's secretWrites says what is refused.",
  },
  'A-AUTH-BUDGET-CEILING': {
    message:
      "The call's input needs a larger budget (fuel, capability calls or deadline) than the policy's ceiling allows for that much data.",
    hint: 'Raise the policy field named in details.policy_field (ceilings.perInputMiB.*) to at least details.per_input_mib, or call the tool on less data.',
  },
  'A-AUTH-DOCKER-IMAGE': {
    message: 'The policy does not let this tool run this image.',
    hint: "Add the image to the policy's docker.images and, if the tool's entry lists images, to docker.tools.<tool>.images (ABI-DOCKER-002).",
  },
  'A-AUTH-DOCKER-NETWORK': {
    message: 'The policy does not grant this tool the network it asks for.',
    hint: 'Ask for network none, or grant docker.tools.<tool>.network: bridge in the policy; host is never granted (ABI-DOCKER-002).',
  },
  'A-AUTH-DOCKER-ENV': {
    message: 'The policy does not let this tool set this environment variable in its containers.',
    hint: "Leave the variable out, or add its name to the policy's docker.tools.<tool>.env (ABI-DOCKER-002).",
  },
  'A-AUTH-DOCKER-LIMIT': {
    message: "A container limit asked for is over the policy's docker ceiling.",
    hint: "Ask for at most the ceiling named in details, or raise the policy's docker.ceilings (ABI-DOCKER-003).",
  },
  'A-AUTH-SLURM-TOOL': {
    message: "The policy's slurm section has no entry for this tool, so it may submit no job.",
    hint: "Add the tool's exact id under the policy's slurm.tools (ABI-SLURM-002).",
  },
  'A-AUTH-SLURM-PARTITION': {
    message: 'The policy does not let this tool submit to this partition.',
    hint: "Name a partition on the policy's slurm.partitions (and on slurm.tools.<tool>.partitions when the tool's entry lists them), or leave it out for the first one (ABI-SLURM-002).",
  },
  'A-AUTH-SLURM-ACCOUNT': {
    message: 'The policy does not let this tool charge this account.',
    hint: "Name an account on the policy's slurm.accounts (and on slurm.tools.<tool>.accounts when the tool's entry lists them), or leave it out for the first one (ABI-SLURM-002).",
  },
  'A-AUTH-SLURM-QOS': {
    message: 'The policy does not let this tool ask for this QOS.',
    hint: "Name a QOS on the policy's slurm.qos (and on slurm.tools.<tool>.qos when the tool's entry lists them), or leave it out for the first one (ABI-SLURM-002).",
  },
  'A-AUTH-SLURM-LIMIT': {
    message: "A job limit asked for is over the policy's slurm ceiling.",
    hint: "Ask for at most the ceiling named in details, or raise the policy's slurm.ceilings (ABI-SLURM-003).",
  },
  'A-AUTH-FANOUT-WORK-ROOT': {
    message: "The job array's directory is not under the policy's slurm.workRoot, the directory the compute nodes see.",
    hint: 'Give --dir inside slurm.workRoot, or set slurm.workRoot in the policy to a directory the nodes see at the same path (ABI-FANOUT-007).',
  },
  'A-AUTH-SLURM-OUTPUT-PATH': {
    message:
      "A file to collect from the job's directory is a symbolic link or not a regular file, or out/ or meta/ is not the job's own directory.",
    hint: 'Have the job write its declared outputs as regular files directly under out/, and leave out/ and meta/ as they were made (ABI-SLURM-010).',
  },
  'P-PRECOND-MANIFEST-INVALID': {
    message: 'One or more toolpacks violate the ABI; the host refuses to start.',
    hint: 'Fix every violation listed (file: field: reason), then run `helix validate`.',
  },
  'P-PRECOND-POLICY-INVALID': {
    message: 'The policy file is invalid.',
    hint: 'Fix the fields listed in details.violations; see abi/schemas/policy.json.',
  },
  'P-PRECOND-PLUGINS-DIR': {
    message: 'The toolpacks directory cannot be read.',
    hint: 'Pass an existing directory with --toolpacks, or omit it to use the bundled toolpacks.',
  },
  'P-PRECOND-STORE': {
    message: 'The store cannot be opened.',
    hint: 'Check that the Helix home (--home or HELIX_HOME) is a writable directory.',
  },
  'P-PRECOND-STORE-BUSY': {
    message: 'The store is in use by another process, so this cannot be done now.',
    hint: 'Stop the other Helix processes using this home (helix serve, calls, imports), then run `helix gc --compact` again; plain `helix gc` runs alongside them.',
  },
  'P-PRECOND-PATH': {
    message: 'The path cannot be used.',
    hint: 'Pass an existing, readable regular file (for import) or a new file in an existing directory (for export).',
  },
  'P-PRECOND-ARTIFACT-NOT-FOUND': {
    message: 'No artifact with this id is in the store.',
    hint: '`helix artifact list` shows the stored artifacts.',
  },
  'P-PRECOND-RUN-NOT-FOUND': {
    message: 'No run with this id is in the store.',
    hint: '`helix runs list` shows the recorded runs.',
  },
  'P-PRECOND-SECRET-MISSING': {
    message: 'The secret is not configured or cannot be read.',
    hint: "Define the secret in the policy's secrets (env or file) and make its source available.",
  },
  'P-PRECOND-VERIFY': {
    message: 'The run cannot be verified.',
    hint: 'Only succeeded runs of toolpacks whose module and input are in the store can be verified.',
  },
  'P-PRECOND-MODULE-REFUSED': {
    message: "The tool's module was refused when it was compiled for its first call; nothing of it ran.",
    hint: 'Run `helix validate` to check the toolpack in full, then `helix build` in its directory.',
  },
  'P-PRECOND-HOST-CLOSED': {
    message: 'The host is closed.',
    hint: 'Create a new host; a closed host accepts no calls.',
  },
  'P-PRECOND-DOCKER-IMAGE-MISSING': {
    message: 'The Docker engine does not have the image; docker.run never pulls.',
    hint: 'Load or pull the image on the engine first (`docker pull REPOSITORY@sha256:...` or `docker load`); `scripts/services.sh up docker` brings up the local test image.',
  },
  'P-PRECOND-JOB-HOME': {
    message: 'The node-local store cannot be used for the job: it is the submitting store, or it lies on a network filesystem.',
    hint: 'Let `helix job run` make its store under $TMPDIR on a local disk, or pass --home on a local filesystem; LMDB is never shared or kept on a network filesystem (ABI-FANOUT-003).',
  },
  'P-PRECOND-JOB-SECRETS': {
    message: 'A tool that may read secrets cannot be fanned out to a node.',
    hint: "Call the tool here: a run that receives a secret keys its journal with this store's secret hash key, which never leaves this machine (ABI-FANOUT-002).",
  },
  'P-PRECOND-JOB-RESULT-MISSING': {
    message: 'The job has written no result bundle yet.',
    hint: 'Wait for the job to end (`helix job collect --wait`); its Slurm log (slurm.out in the element directory) says why a job ended without a result.',
  },
  'P-PRECOND-SLURM-WORK-ROOT': {
    message: "The policy's slurm.workRoot is not set, or is not a directory Helix can write.",
    hint: 'Set slurm.workRoot to an existing, writable directory (no symbolic link) that the compute nodes see at the same path (ABI-SLURM-007).',
  },
  'P-PRECOND-SLURM-JOB-UNKNOWN': {
    message: 'This tool submitted no job with this id.',
    hint: 'Pass a job id that slurm.submit returned to this tool; jobs of other tools and jobs submitted outside Helix are not reachable (ABI-SLURM-009).',
  },
  'P-PRECOND-SLURM-JOB-ACTIVE': {
    message: 'The job has not ended yet, so its outputs cannot be collected.',
    hint: 'Poll slurm.status until terminal is true, then collect (ABI-SLURM-010).',
  },
  'R-TIMEOUT-001': {
    message: 'The call did not finish before its deadline.',
    hint: "Raise timeout_ms (up to the tool's timeoutMs and the policy ceiling) or send less work.",
  },
  'R-UPSTREAM-HTTP-DNS': {
    message: 'The host name could not be resolved.',
    hint: 'Check the host name; if it is right, the resolver failed: retry with backoff.',
  },
  'R-UPSTREAM-HTTP-NETWORK': {
    message: 'The connection to the server failed (refused, reset, TLS or protocol error).',
    hint: 'Retry with backoff; if it repeats, check that the server is up and its certificate is valid (details.cause_code).',
  },
  'R-UPSTREAM-HTTP-REDIRECT-LIMIT': {
    message: 'The server redirected more times than the policy allows.',
    hint: "Request the final URL directly, or raise the policy's network.maxRedirects.",
    retryable: false,
  },
  'R-UPSTREAM-CAPABILITY': {
    message: 'A capability failed for a reason outside the tool.',
    hint: 'Retry with backoff; if it repeats, report it with details and the host logs.',
  },
  'R-UPSTREAM-DOCKER': {
    message: 'The Docker engine failed or could not be reached.',
    hint: 'Check that the engine answers (`docker info`, with DOCKER_HOST set if it is not /var/run/docker.sock) and retry; details.phase says where it failed.',
  },
  'R-UPSTREAM-SLURM': {
    message: 'A Slurm command failed or did not answer in time.',
    hint: 'Check that the cluster answers (`sinfo`, with SLURM_CONF set if the config is not in its default place) and retry; details name the command, its exit code and its stderr.',
  },
  'R-TIMEOUT-CANCELLED': {
    message: 'The call was cancelled by its caller before it finished.',
    hint: 'Nothing to fix: the caller withdrew the call. Call again to run it.',
  },
  'R-CAP-QUEUE-FULL': {
    message: 'The host has too many calls waiting.',
    hint: 'Retry after details.retry_after_ms.',
  },
  'R-CAP-STORE-CONFLICT': {
    message: 'LMDB aborted a write of the store as inconsistent on every attempt while other processes wrote it.',
    hint: 'Nothing of the write was stored: run the command again (after details.retry_after_ms). If it keeps failing with no other Helix process running, run `helix store check`.',
  },
  'R-CAP-CALL-LIMIT': {
    message: 'The tool made more capability calls than its limit.',
    hint: 'Raise limits.maxCapabilityCalls within the policy ceiling, or batch the work in fewer calls.',
    retryable: false,
  },
  'R-CAP-HTTP-RESPONSE-TOO-LARGE': {
    message: 'The response body is larger than the limit.',
    hint: "Ask for less (a range, a page, a filter), or raise max_response_bytes within the policy's network.maxResponseBytes.",
    retryable: false,
  },
  'R-CAP-SLURM-OUTPUT-TOO-LARGE': {
    message: "A declared output in the job's out/ is larger than the policy's slurm.ceilings.outputBytes.",
    hint: "Have the job write less per file, or raise the policy's slurm.ceilings.outputBytes (ABI-SLURM-010).",
    retryable: false,
  },
  'R-CAP-MCP-OUTPUT-BACKLOG': {
    message: "The MCP client stopped reading the server's output.",
    hint: "Read the server's stdout continuously; a client that leaves more than the backlog bound unread is disconnected, and its calls are cancelled and recorded.",
    retryable: false,
  },
  'R-CAP-PAYLOAD': {
    message: 'A capability request or result is larger than allowed.',
    hint: 'Send or ask for less per call (artifact reads and writes take up to 1 MiB per piece).',
    retryable: false,
  },
  'S-TOOL-TRAP': {
    message: 'The tool trapped.',
    hint: "Report it to the tool's author with the input; details carry the trap and any panic message.",
  },
  'S-TOOL-STACK-OVERFLOW': {
    message: 'The tool exhausted its call stack.',
    hint: 'The tool recursed too deeply for this input; report it to its author.',
  },
  'S-TOOL-FUEL-EXHAUSTED': {
    message: 'The tool used up its fuel (instruction budget).',
    hint: 'Send less work, or raise the budget: limits.perInputMiB.fuel for a tool on data, limits.fuel otherwise (the policy ceilings cap both).',
  },
  'S-TOOL-BAD-POINTER': {
    message: 'The tool returned a pointer or length outside its memory.',
    hint: 'The module breaks ABI-CALL-004; report it to its author.',
  },
  'S-TOOL-BULK-BUFFER': {
    message: 'The tool passed capability_call_bulk a buffer larger than BULK_MAX_PIECE.',
    hint: 'The module breaks ABI-BULK-003 (buffers of at most 4 MiB); report it to its author, or read and write in smaller pieces.',
  },
  'S-TOOL-OUTPUT-TOO-LARGE': {
    message: 'The tool returned more bytes than its output limit.',
    hint: 'Write large results as artifacts, or raise limits.maxOutputBytes within the policy ceiling.',
  },
  'S-TOOL-OUTPUT-ENCODING': {
    message: 'The tool output is not valid UTF-8.',
    hint: 'The module breaks ABI-OUTPUT-001; report it to its author.',
  },
  'S-TOOL-OUTPUT-JSON': {
    message: 'The tool output is not valid JSON.',
    hint: 'The module breaks ABI-OUTPUT-001; report it to its author.',
  },
  'S-TOOL-OUTPUT-ENVELOPE': {
    message: 'The tool output is not a valid output envelope.',
    hint: 'The module breaks ABI-OUTPUT-002; report it to its author.',
  },
  'S-TOOL-OUTPUT-DEPTH': {
    message: 'The tool output nests arrays and objects deeper than the host accepts.',
    hint: 'The module breaks ABI-JSON-001 (an output of at most 64 levels); report it to its author.',
  },
  'S-TOOL-OUTPUT-NUMBER': {
    message: 'The tool output holds a number the host cannot carry exactly: not finite, or an integer beyond ±(2^53-1).',
    hint: 'The module breaks ABI-JSON-003: large integers (a u64, say) must go out as strings; report it to its author.',
  },
  'S-TOOL-OUTPUT-VALUE': {
    message: 'The tool output holds a string that is not Unicode text (a lone surrogate) or a member named __proto__.',
    hint: 'The module breaks ABI-JSON-004; report it to its author.',
  },
  'S-TOOL-CAPABILITY-DEPTH': {
    message: 'A capability request nests arrays and objects deeper than the host accepts; the run ends.',
    hint: 'The module breaks ABI-JSON-001 (capability args of at most 64 levels); report it to its author.',
  },
  'S-TOOL-INSTANTIATE': {
    message: 'The tool module could not be instantiated.',
    hint: 'The module failed while starting; report it to its author with details.',
  },
  'S-TOOL-EXTISM-ERROR': {
    message: 'The Extism plugin reported an error.',
    hint: "details.plugin_error carries the plugin's message (extism_error_set) or details.return_code its non-zero result; report it to the plugin's author with the input.",
  },
  'S-TOOL-DOCKER-OUTPUT': {
    message: 'A declared output the container left in out/ is not a regular file of at most the allowed size, so it was not read.',
    hint: "The container must write each declared output as a regular file (not a symbolic link, directory, FIFO or device) within the policy's docker.ceilings.maxOutputFileBytes (ABI-DOCKER-009); details.file and details.reason say which and why.",
  },
  'S-TOOL-CONTAINER-EXIT': {
    message: "The container tool's command failed: it exited non-zero or was killed for passing its memory limit.",
    hint: "details.exit_code, details.oom_killed and details.stderr (its tail) say how; fix the input, or raise the manifest's limits within the policy's docker.ceilings (ABI-CONTAINER-006).",
  },
  'S-TOOL-CONTAINER-STDOUT': {
    message: "The container tool's stdout does not read as the format its manifest declares.",
    hint: "The tool's stdout must be the table or JSON its manifest's stdout.format names (ABI-CONTAINER-006); details.reason says where it broke.",
  },
  'S-TOOL-WORKER-LOST': {
    message: 'The worker running the tool stopped unexpectedly.',
    hint: 'Retry once; if it repeats, report it with the host logs.',
    retryable: true,
  },
  'C-CONTRACT-TOOL-UNKNOWN': {
    message: 'No tool with this id is loaded.',
    hint: '`helix tools` lists the loaded tools.',
  },
  'C-CONTRACT-VERSION-NO-MATCH': {
    message: 'No loaded version of the tool satisfies the requested range.',
    hint: 'Request one of the versions in details.available.',
  },
  'C-CONTRACT-VERSION-AMBIGUOUS': {
    message: 'The version range matches more than one major version.',
    hint: 'Pin a major version, e.g. "1.x"; majors differ in contract.',
  },
  'C-CONTRACT-FN-UNKNOWN': {
    message: 'The tool has no function with this name.',
    hint: 'Omit fn, or use the function named in details.available.',
  },
  'C-CONTRACT-OUTPUT-ROLE': {
    message: 'The tool wrote to an output role it did not declare, or after sealing it.',
    hint: "Declare the role in the manifest's declaredOutputs, and write each role until final once.",
  },
  'C-CONTRACT-DECLARED-OUTPUTS': {
    message: 'The run did not create exactly its declared outputs with their declared types.',
    hint: 'Create every role in declaredOutputs, with its type, and no other (details list the differences).',
  },
  'C-CONTRACT-OUTPUT-SCHEMA': {
    message: "The tool's output does not match its output schema.",
    hint: 'The tool breaks its own contract; report it to its author with details.violations.',
  },
  'C-CONTRACT-JOB-TOOL': {
    message: 'The tool the node loaded is not the one the job was made for, so its run would have another identity.',
    hint: "Give the node the same toolpacks as the submitting host (the job's plugins_dir) built to the same module digest, and the same Helix version; details show both run ids (ABI-FANOUT-004).",
  },
  'D-DATA-CHECKSUM': {
    message: 'Stored bytes do not match their content hash.',
    hint: 'The store is damaged; re-import the artifact from its source (details name the blob).',
  },
  'D-DATA-BUNDLE-HASH': {
    message: 'A file of the bundle does not match the hash or size its record names.',
    hint: 'The bundle was changed after it was written: run the job again from its job bundle. details name the file, the expected and the actual hash (ABI-FANOUT-005).',
  },
  'D-DATA-BUNDLE-IDENTITY': {
    message: 'The result bundle does not hold the run the job was made for: another run id, tool, params, policy or inputs.',
    hint: 'Collect the result next to the job bundle it was run from; a result that names another run was changed or mixed up (ABI-FANOUT-005). details name the field.',
  },
  'D-DATA-BUNDLE-VERIFY': {
    message: 'The collected run does not reproduce: re-executed against its journal, it gives another result than the result bundle holds.',
    hint: 'Nothing was collected. The result bundle was changed after the node wrote it, or the node ran other code: run the job again; details carry the verification report (ABI-FANOUT-005).',
  },
  'D-DATA-RECORD-INVALID': {
    message: 'A stored record does not match its schema.',
    hint: 'The store is damaged or was written by an incompatible Helix version (details name the database, the key and what is wrong); `helix store check` lists every damaged record; restore the store from a backup or re-import from the source.',
  },
  'D-DATA-REFERENCE': {
    message: 'A stored record refers to something the store does not hold, or holds differently.',
    hint: 'The store is damaged; `helix store check` lists every such reference. Restore the store from a backup, or re-import the artifact from its source.',
  },
  'D-DATA-JOURNAL': {
    message: "The run's journal does not match its hash chain.",
    hint: 'The journal was altered after the run; the run cannot be trusted or verified.',
  },
  'D-DATA-DIGEST-MISMATCH': {
    message: 'Bytes do not match their recorded digest.',
    hint: 'Run `helix build` in the toolpack directory to rebuild the module and write its digest, or restore the original bytes.',
  },
  'D-DATA-STORE-HEADER': {
    message: "The store file's header (its LMDB meta pages) is damaged.",
    hint: 'Nothing was read or changed. Restore the store (helix.mdb) from a backup; `helix store check` on the backup tells whether it is sound.',
  },
  'D-DATA-STORE-DAMAGED': {
    message: 'LMDB cannot read a page of the store file.',
    hint: 'The store file is damaged below the record level (details name the database and the key being read); restore it from a backup, or run `helix store check` to list what is still readable.',
  },
} as const satisfies Record<string, ErrorSpec>;

/** A code the host produces. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Guests may use any code of a known class with their own subcode, e.g. `D-DATA-FORMAT`. */
export const ERROR_CODE_PATTERN = /^(I-REQ|A-AUTH|P-PRECOND|R-TIMEOUT|R-UPSTREAM|R-CAP|S-TOOL|C-CONTRACT|D-DATA)-[A-Z0-9]+(?:-[A-Z0-9]+)*$/;

/** The four outcomes: every response has exactly one. */
export type ResponseStatus = 'success' | 'retryable_error' | 'terminal_error' | 'invalid_request';

/** Determinism class of a tool (`pure`, `idempotent`, `side_effectful`). */
export type Determinism = 'pure' | 'idempotent' | 'side_effectful';

/** The class of a code, or undefined when the code does not follow the taxonomy. */
export function errorClassOf(code: string): ErrorClass | undefined {
  if (!ERROR_CODE_PATTERN.test(code)) return undefined;
  const cls = Object.keys(ERROR_CLASSES).find((c) => code.startsWith(`${c}-`));
  return cls as ErrorClass | undefined;
}

/** Whether a code is retryable: the code's own flag, else its class default. */
export function isRetryable(code: string, determinism: Determinism = 'pure'): boolean {
  const cls = errorClassOf(code);
  if (cls === undefined) return false;
  // Timeouts are safe to retry only when a second attempt cannot duplicate an effect.
  if (cls === 'R-TIMEOUT') return determinism !== 'side_effectful';
  const spec = (ERROR_CODES as Record<string, ErrorSpec>)[code];
  return spec?.retryable ?? ERROR_CLASSES[cls].retryable;
}

/** The response status for an error code (exactly one of four outcomes). */
export function statusForCode(code: string, determinism: Determinism = 'pure'): Exclude<ResponseStatus, 'success'> {
  const cls = errorClassOf(code);
  if (cls === 'I-REQ') return 'invalid_request';
  return isRetryable(code, determinism) ? 'retryable_error' : 'terminal_error';
}
