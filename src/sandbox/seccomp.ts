// The seccomp filter every bubblewrap sandbox loads (`bwrap --seccomp FD`), as a classic BPF
// program built here (bwrap takes the compiled program; no libseccomp is needed). It refuses:
//  - the kernel keyring (keyctl, add_key, request_key): a process inherits its parent's session
//    keyring through every namespace, and an OS keychain may keep secrets there (measured: a
//    key added to the gateway's session keyring is readable inside a namespace-only sandbox);
//  - io_uring, whose operations would bypass the socket check below (libuv falls back to threads);
//  - with `network: none`, IPv4 and IPv6 sockets. The network namespace already cuts the host
//    off; this also takes away the sandbox's own loopback, so `none` is "no IP at all" (Unix
//    sockets and socketpairs still work: Node needs them for its own child processes).
// System calls of a foreign ABI (32-bit or x32 code on x86-64) are refused outright, since their
// numbers differ and would slip past the checks.

/** One BPF instruction: { code, jt, jf, k } (struct sock_filter, 8 bytes). */
interface Insn {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;

const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const EACCES = 13;
const ENOSYS = 38;
const AF_INET = 2;
const AF_INET6 = 10;
const X32_SYSCALL_BIT = 0x40000000;

// struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6];
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
/** args[0], low 32 bits on a little-endian machine (both supported ones are). */
const OFFSET_ARG0 = 16;

interface Abi {
  audit: number;
  x32: boolean;
  socket: number;
  blocked: number[];
}

const ABIS: Partial<Record<NodeJS.Architecture, Abi>> = {
  // keyctl 250, add_key 248, request_key 249, io_uring_setup/enter/register 425-427.
  x64: { audit: 0xc000003e, x32: true, socket: 41, blocked: [248, 249, 250, 425, 426, 427] },
  // keyctl 219, add_key 217, request_key 218, io_uring 425-427.
  arm64: { audit: 0xc00000b7, x32: false, socket: 198, blocked: [217, 218, 219, 425, 426, 427] },
};

/** Whether a filter can be built for this CPU architecture. */
export function seccompSupported(arch: NodeJS.Architecture = process.arch): boolean {
  return ABIS[arch] !== undefined;
}

type Step = { insn: Insn; to?: { jt?: string; jf?: string } } | { label: string };

/** The compiled filter for `arch`, or undefined where none can be built (then none is loaded). */
export function seccompProgram(opts: { denyIp: boolean; arch?: NodeJS.Architecture }): Buffer | undefined {
  const abi = ABIS[opts.arch ?? process.arch];
  if (!abi) return undefined;
  const steps: Step[] = [];
  const op = (code: number, k: number, to?: { jt?: string; jf?: string }) => steps.push({ insn: { code, jt: 0, jf: 0, k }, ...(to ? { to } : {}) });
  op(LD_W_ABS, OFFSET_ARCH);
  op(JEQ_K, abi.audit, { jf: "foreign" });
  op(LD_W_ABS, OFFSET_NR);
  if (abi.x32) op(JGE_K, X32_SYSCALL_BIT, { jt: "foreign" });
  for (const nr of abi.blocked) op(JEQ_K, nr, { jt: "eperm" });
  if (opts.denyIp) op(JEQ_K, abi.socket, { jt: "socket" });
  op(RET_K, RET_ALLOW);
  if (opts.denyIp) {
    steps.push({ label: "socket" });
    op(LD_W_ABS, OFFSET_ARG0);
    op(JEQ_K, AF_INET, { jt: "eacces" });
    op(JEQ_K, AF_INET6, { jt: "eacces" });
    op(RET_K, RET_ALLOW);
    steps.push({ label: "eacces" });
    op(RET_K, RET_ERRNO | EACCES);
  }
  steps.push({ label: "eperm" });
  op(RET_K, RET_ERRNO | EPERM);
  steps.push({ label: "foreign" });
  op(RET_K, RET_ERRNO | ENOSYS);
  return assemble(steps);
}

/** Resolves labels into relative jump offsets and encodes the program (host byte order). */
function assemble(steps: Step[]): Buffer {
  const labels = new Map<string, number>();
  const insns: { insn: Insn; to?: { jt?: string; jf?: string } }[] = [];
  for (const s of steps) {
    if ("label" in s) labels.set(s.label, insns.length);
    else insns.push(s);
  }
  const buf = Buffer.alloc(insns.length * 8);
  insns.forEach(({ insn, to }, i) => {
    const rel = (label: string | undefined): number => {
      if (label === undefined) return 0;
      const at = labels.get(label);
      if (at === undefined) throw new Error(`seccomp: unknown label ${label}`);
      const off = at - (i + 1);
      if (off < 0 || off > 255) throw new Error(`seccomp: jump to ${label} out of range`);
      return off;
    };
    const o = i * 8;
    buf.writeUInt16LE(insn.code, o);
    buf.writeUInt8(rel(to?.jt), o + 2);
    buf.writeUInt8(rel(to?.jf), o + 3);
    buf.writeUInt32LE(insn.k >>> 0, o + 4);
  });
  return buf;
}
