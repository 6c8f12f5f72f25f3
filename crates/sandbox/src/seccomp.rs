//! The seccomp filter of a sandboxed command, compiled in the parent.
//!
//! Guarantees: the program answers `EPERM` to every system call of
//! [`ALWAYS_REFUSED`], to `clone` asking for a new namespace, to the
//! terminal-injection ioctls, to `mknod`/`mknodat` of a block or
//! character device, to resource limits, priorities and scheduling of any
//! process but the caller (`prlimit64`, `setpriority`, `ioprio_set`,
//! `sched_set*`, `migrate_pages`, `move_pages` with a pid other than 0),
//! so a command can neither kill axon through its limits (an
//! `RLIMIT_FSIZE` of 0 on axon is a SIGXFSZ at its next write) nor starve
//! other processes, to x32 system calls on x86_64 (whose numbers
//! would otherwise slip past the number checks) and, when the network is
//! off, to `socket`/`socketpair` of any family but `AF_UNIX`, to `AF_UNIX`
//! datagram sockets, to every `connect` and to `sendto` with an address,
//! so no Unix socket on the filesystem can be reached (see
//! `insert_network_off`); `clone3` answers `ENOSYS`, since its flags live
//! in memory a filter cannot read and C libraries fall back to `clone` on
//! `ENOSYS`. A system call of another architecture (i386 `int 0x80`) kills
//! the process (seccompiler's architecture check), so no second syscall
//! table can bypass the rules.
//! Everything else is allowed: the filter narrows, Landlock confines files.

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

/// Refused with `EPERM` in every mode: debugging other processes, the
/// kernel's own state (modules, kexec, reboot, swap, mounts, accounting),
/// and interfaces that are mostly kernel attack surface for a build or a
/// test (bpf, perf events, userfaultfd, keyrings, io_uring, namespaces).
pub const ALWAYS_REFUSED: &[(&str, libc::c_long)] = &[
    ("ptrace", libc::SYS_ptrace),
    ("process_vm_readv", libc::SYS_process_vm_readv),
    ("process_vm_writev", libc::SYS_process_vm_writev),
    ("kexec_load", libc::SYS_kexec_load),
    ("kexec_file_load", libc::SYS_kexec_file_load),
    ("init_module", libc::SYS_init_module),
    ("finit_module", libc::SYS_finit_module),
    ("delete_module", libc::SYS_delete_module),
    ("reboot", libc::SYS_reboot),
    ("swapon", libc::SYS_swapon),
    ("swapoff", libc::SYS_swapoff),
    ("mount", libc::SYS_mount),
    ("umount2", libc::SYS_umount2),
    ("pivot_root", libc::SYS_pivot_root),
    ("bpf", libc::SYS_bpf),
    ("perf_event_open", libc::SYS_perf_event_open),
    ("userfaultfd", libc::SYS_userfaultfd),
    ("keyctl", libc::SYS_keyctl),
    ("add_key", libc::SYS_add_key),
    ("request_key", libc::SYS_request_key),
    ("io_uring_setup", libc::SYS_io_uring_setup),
    ("io_uring_enter", libc::SYS_io_uring_enter),
    ("io_uring_register", libc::SYS_io_uring_register),
    ("unshare", libc::SYS_unshare),
    ("setns", libc::SYS_setns),
    ("acct", libc::SYS_acct),
    // The new mount API: the mount namespace's read-only binds must stay.
    ("open_tree", libc::SYS_open_tree),
    ("move_mount", libc::SYS_move_mount),
    ("fsopen", libc::SYS_fsopen),
    ("fsconfig", libc::SYS_fsconfig),
    ("fsmount", libc::SYS_fsmount),
    ("fspick", libc::SYS_fspick),
    ("mount_setattr", libc::SYS_mount_setattr),
    // The machine's names, shared with every process (root could set them).
    ("sethostname", libc::SYS_sethostname),
    ("setdomainname", libc::SYS_setdomainname),
    // Reaching into another process: its descriptors, memory advice,
    // kernel object comparison.
    ("pidfd_getfd", libc::SYS_pidfd_getfd),
    ("process_madvise", libc::SYS_process_madvise),
    ("kcmp", libc::SYS_kcmp),
];

/// System calls whose first argument is a pid, refused unless it is 0
/// (the caller): limits, scheduling and memory placement of other
/// processes, axon's included.
const SELF_ONLY: [libc::c_long; 7] = [
    libc::SYS_prlimit64,
    libc::SYS_sched_setaffinity,
    libc::SYS_sched_setscheduler,
    libc::SYS_sched_setparam,
    libc::SYS_sched_setattr,
    libc::SYS_migrate_pages,
    libc::SYS_move_pages,
];

/// `PRIO_PROCESS` from `<sys/resource.h>` (its libc type varies).
const PRIO_PROCESS: u64 = 0;
/// `IOPRIO_WHO_PROCESS` from `<linux/ioprio.h>`.
const IOPRIO_WHO_PROCESS: u64 = 1;
/// File type bits of a mode, and the two device types refused.
const S_IFMT: u64 = libc::S_IFMT as u64;
const DEVICE_TYPES: [u64; 2] = [libc::S_IFBLK as u64, libc::S_IFCHR as u64];

/// `clone` flags that create a namespace; `clone` with any of them is
/// refused like `unshare`.
const CLONE_NAMESPACE_FLAGS: [libc::c_int; 7] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWCGROUP,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
];

/// ioctls that push input into a terminal: a command could type into the
/// user's shell after axon exits.
const TERMINAL_INJECTION: [libc::c_ulong; 2] =
    [libc::TIOCSTI as libc::c_ulong, 0x541C /* TIOCLINUX */];

/// Bit 30 of the syscall number marks the x32 ABI on x86_64.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

// Classic BPF opcodes (<linux/bpf_common.h>), as `sock_filter` wants them.
const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JGE_K: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
/// Offset of `nr` in `struct seccomp_data`.
const SECCOMP_DATA_NR: u32 = 0;
/// Length of seccompiler's leading architecture check (load arch, compare,
/// kill), after which our own checks go.
const ARCH_CHECK_LEN: usize = 3;

/// The seccompiler architecture of this build, or why there is none.
pub(crate) fn target_arch() -> Result<TargetArch, String> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
        format!(
            "seccomp filters are not supported on {} by this build (x86_64, aarch64 and riscv64 \
             are)",
            std::env::consts::ARCH
        )
    })
}

/// Compiles the filter for a command; `network` false adds the rules of
/// `insert_network_off`.
pub(crate) fn build(network: bool) -> Result<BpfProgram, String> {
    let mut rules: std::collections::BTreeMap<i64, Vec<SeccompRule>> =
        ALWAYS_REFUSED.iter().map(|(_, number)| (nr(*number), Vec::new())).collect();

    let mut clone_rules = Vec::new();
    for flag in CLONE_NAMESPACE_FLAGS {
        let flag = u64::from(flag.unsigned_abs());
        clone_rules.push(rule(vec![condition(0, SeccompCmpOp::MaskedEq(flag), flag)?])?);
    }
    rules.insert(nr(libc::SYS_clone), clone_rules);

    let mut ioctl_rules = Vec::new();
    for request in TERMINAL_INJECTION {
        ioctl_rules.push(rule(vec![condition(1, SeccompCmpOp::Eq, request)?])?);
    }
    rules.insert(nr(libc::SYS_ioctl), ioctl_rules);

    insert_other_processes(&mut rules)?;
    insert_devices(&mut rules)?;

    if !network {
        insert_network_off(&mut rules)?;
    }

    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        target_arch()?,
    )
    .map_err(|error| error.to_string())?;
    let mut program = BpfProgram::try_from(filter).map_err(|error| error.to_string())?;
    let prologue = prologue();
    program.splice(ARCH_CHECK_LEN..ARCH_CHECK_LEN, prologue);
    if program.len() > libc::BPF_MAXINSNS as usize {
        return Err(format!("the filter has {} instructions, more than 4096", program.len()));
    }
    Ok(program)
}

/// The rules added when the network is off. Only `AF_UNIX` sockets can
/// exist then, and those must not reach a socket outside the sandbox by
/// its path (a Docker daemon, the D-Bus session bus, a tmux server: each
/// runs what it is sent, unconfined), which Landlock cannot refuse before
/// ABI 9. So:
/// - `socket`/`socketpair` of any family but `AF_UNIX` are refused;
/// - `connect` is refused on every socket;
/// - `sendto` with a destination address is refused;
/// - `AF_UNIX` datagram sockets (`SOCK_DGRAM`, and `SOCK_RAW`, which the
///   kernel turns into `SOCK_DGRAM`) are not created, because `sendmsg`
///   carries its destination inside a `struct msghdr` the filter cannot
///   read, and a datagram socket, even one of a `socketpair`, sends to any
///   path named there.
///
/// Stream and seqpacket sockets ignore or refuse a `sendmsg` address, so
/// those keep `socketpair`, `bind`, `listen` and `accept` (Python's
/// multiprocessing and asyncio, a server listening inside the sandbox).
fn insert_network_off(
    rules: &mut std::collections::BTreeMap<i64, Vec<SeccompRule>>,
) -> Result<(), String> {
    let not_unix = || condition(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64);
    let datagram = |kind: libc::c_int| {
        let kind = u64::from(kind.unsigned_abs());
        condition(1, SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK), kind)
    };
    for number in [libc::SYS_socket, libc::SYS_socketpair] {
        rules.insert(
            nr(number),
            vec![
                rule(vec![not_unix()?])?,
                rule(vec![datagram(libc::SOCK_DGRAM)?])?,
                rule(vec![datagram(libc::SOCK_RAW)?])?,
            ],
        );
    }
    // No condition: every call matches.
    rules.insert(nr(libc::SYS_connect), Vec::new());
    let destination = SeccompCondition::new(4, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)
        .map_err(|error| error.to_string())?;
    rules.insert(nr(libc::SYS_sendto), vec![rule(vec![destination])?]);
    Ok(())
}

/// Limits, priorities and scheduling only for the caller (see
/// [`SELF_ONLY`]); `setpriority` and `ioprio_set` only for
/// `PRIO_PROCESS`/`IOPRIO_WHO_PROCESS` 0, since their user and group
/// forms reach every process of the user.
fn insert_other_processes(
    rules: &mut std::collections::BTreeMap<i64, Vec<SeccompRule>>,
) -> Result<(), String> {
    for number in SELF_ONLY {
        rules.insert(nr(number), vec![rule(vec![condition(0, SeccompCmpOp::Ne, 0)?])?]);
    }
    rules.insert(
        nr(libc::SYS_setpriority),
        vec![
            rule(vec![condition(0, SeccompCmpOp::Ne, PRIO_PROCESS)?])?,
            rule(vec![condition(1, SeccompCmpOp::Ne, 0)?])?,
        ],
    );
    rules.insert(
        nr(libc::SYS_ioprio_set),
        vec![
            rule(vec![condition(0, SeccompCmpOp::Ne, IOPRIO_WHO_PROCESS)?])?,
            rule(vec![condition(1, SeccompCmpOp::Ne, 0)?])?,
        ],
    );
    Ok(())
}

/// No block or character device nodes (fifos, sockets and plain files
/// made by `mknod` stay allowed); Landlock refuses them too.
fn insert_devices(
    rules: &mut std::collections::BTreeMap<i64, Vec<SeccompRule>>,
) -> Result<(), String> {
    let device = |arg: u8| -> Result<Vec<SeccompRule>, String> {
        DEVICE_TYPES
            .iter()
            .map(|kind| rule(vec![condition(arg, SeccompCmpOp::MaskedEq(S_IFMT), *kind)?]))
            .collect()
    };
    rules.insert(nr(libc::SYS_mknodat), device(2)?);
    #[cfg(target_arch = "x86_64")]
    rules.insert(nr(libc::SYS_mknod), device(1)?);
    Ok(())
}

/// The bits of `socket`'s type argument that hold the type (the rest are
/// `SOCK_NONBLOCK` and `SOCK_CLOEXEC`); `SOCK_TYPE_MASK` in the kernel.
const SOCK_TYPE_MASK: u64 = 0xf;

/// The checks seccompiler cannot express, placed right after its
/// architecture check (where seccompiler's own code reloads the number, so
/// nothing after depends on the accumulator we leave).
fn prologue() -> Vec<sock_filter> {
    let errno = |code: i32| libc::SECCOMP_RET_ERRNO | (code as u32 & libc::SECCOMP_RET_DATA);
    let mut code = vec![stmt(LD_W_ABS, SECCOMP_DATA_NR)];
    if cfg!(target_arch = "x86_64") {
        // The number rules below compare exact x86_64 numbers; x32 numbers
        // carry bit 30 and would match none of them.
        code.push(jump(JGE_K, X32_SYSCALL_BIT, 0, 1));
        code.push(stmt(RET_K, errno(libc::EPERM)));
    }
    code.push(jump(JEQ_K, libc::SYS_clone3 as u32, 0, 1));
    code.push(stmt(RET_K, errno(libc::ENOSYS)));
    code
}

/// A syscall number as seccompiler keys it (`c_long` is 32 bits on 32-bit
/// Linux, 64 on the rest).
#[allow(clippy::useless_conversion)]
fn nr(number: libc::c_long) -> i64 {
    i64::from(number)
}

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter { code, jt: 0, jf: 0, k }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

fn condition(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(|e| e.to_string())
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prologue_follows_the_architecture_check() {
        let program = build(false).unwrap();
        // seccompiler's check: load arch, jump over the kill if it matches.
        assert_eq!(program[0].k, 4, "loads seccomp_data.arch");
        assert_eq!(program[2].k, libc::SECCOMP_RET_KILL_PROCESS);
        assert_eq!((program[3].code, program[3].k), (LD_W_ABS, SECCOMP_DATA_NR));
        let clone3 = program.iter().position(|i| i.code == JEQ_K && i.k == libc::SYS_clone3 as u32);
        let clone3 = clone3.unwrap();
        assert_eq!(program[clone3 + 1].k, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32);
        // seccompiler's own body starts by reloading the number.
        assert_eq!((program[clone3 + 2].code, program[clone3 + 2].k), (LD_W_ABS, SECCOMP_DATA_NR));
        if cfg!(target_arch = "x86_64") {
            assert_eq!((program[4].code, program[4].k), (JGE_K, X32_SYSCALL_BIT));
            assert_eq!(program[5].k, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32);
        }
    }

    #[test]
    fn the_network_rules_only_exist_when_the_network_is_off() {
        let off = build(false).unwrap();
        let on = build(true).unwrap();
        assert!(off.len() > on.len());
        // Other comparisons may share the number (pivot_root is 41 on
        // aarch64, socket on x86_64), so count rather than look for one.
        let compares = |p: &BpfProgram, number: libc::c_long| {
            p.iter().filter(|i| i.code == JEQ_K && i.k == number as u32).count()
        };
        assert_eq!(compares(&off, libc::SYS_socket), compares(&on, libc::SYS_socket) + 1);
        assert_eq!(compares(&off, libc::SYS_socketpair), compares(&on, libc::SYS_socketpair) + 1);
        assert_eq!(compares(&off, libc::SYS_connect), compares(&on, libc::SYS_connect) + 1);
        assert_eq!(compares(&off, libc::SYS_sendto), compares(&on, libc::SYS_sendto) + 1);
    }
}
