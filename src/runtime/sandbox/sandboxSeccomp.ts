// The sandbox's seccomp filter (classic BPF, as bubblewrap's `--seccomp FD` loads it): with the
// network off, a command may not open Unix-domain sockets. A socket file is reachable through a
// read-only mount (connect(2) is not a write), and the daemon behind it (docker, an ssh or gpg
// agent, the editor's own IPC) would act outside the sandbox on the command's behalf.
// Everything else is allowed; `socketpair(2)` (pipes between a program's own processes) too.

interface Abi {
  /** AUDIT_ARCH_* of the native system-call ABI. */
  arch: number;
  /** socket(2)'s number in that ABI. */
  socket: number;
  /** x86-64's x32 numbers carry this bit: refused, they would bypass the number check. */
  x32Bit?: number;
}

/** The ABIs the filter is written for (Node's process.arch names); elsewhere there is no filter. */
const ABIS: Readonly<Record<string, Abi>> = {
  x64: { arch: 0xc000003e, socket: 41, x32Bit: 0x40000000 },
  arm64: { arch: 0xc00000b7, socket: 198 },
};

const AF_UNIX = 1;
const EPERM = 1;
const ENOSYS = 38;

// BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const retErrno = (errno: number): number => 0x00050000 | errno;

// Offsets in struct seccomp_data: nr, arch, then instruction_pointer, then args[6] (little-endian low words).
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;

/** Whether this machine's ABI has a filter (x86-64 and arm64). */
export function hasUnixSocketFilter(arch: string = process.arch): boolean {
  return ABIS[arch] !== undefined;
}

/**
 * The filter refusing socket(AF_UNIX, …) with EPERM, as bytes of `struct sock_filter`; a system
 * call of another ABI (32-bit code on a 64-bit kernel) fails with ENOSYS, so none slips past.
 * Undefined where the ABI is not known (see hasUnixSocketFilter).
 */
export function unixSocketFilter(arch: string = process.arch): Buffer | undefined {
  const abi = ABIS[arch];
  if (!abi) return undefined;
  const program: Array<[code: number, jt: number, jf: number, k: number]> = [
    [LD_W_ABS, 0, 0, ARCH],
    [JEQ_K, 1, 0, abi.arch],
    [RET_K, 0, 0, retErrno(ENOSYS)],
    [LD_W_ABS, 0, 0, NR],
    // x32: jump to the refusal (4 ahead); without the bit the check is one that never holds.
    [JGE_K, 4, 0, abi.x32Bit ?? 0xffffffff],
    [JEQ_K, 0, 2, abi.socket],
    [LD_W_ABS, 0, 0, ARG0_LOW],
    [JEQ_K, 1, 0, AF_UNIX],
    [RET_K, 0, 0, RET_ALLOW],
    [RET_K, 0, 0, retErrno(EPERM)],
  ];
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], i) => {
    bytes.writeUInt16LE(code, i * 8);
    bytes.writeUInt8(jt, i * 8 + 2);
    bytes.writeUInt8(jf, i * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return bytes;
}
