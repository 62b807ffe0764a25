/*
 * weft's <signal.h>: wasi-libc's (its signal numbers, `signal`, `raise`,
 * `SIG_DFL`, `SIG_IGN`), and what POSIX declares there that wasi-libc leaves
 * out because WASI has no signals: signal sets, `sigaction`, masks,
 * `pthread_kill`, `kill`, `sigwait`, `sigsuspend`. weft delivers signals
 * that the program's threads send each other, as part of the schedule
 * (guest-sdk/c/weft_signal.c); none comes from outside the program.
 */
#ifndef WEFT_SIGNAL_H
#define WEFT_SIGNAL_H
#pragma GCC system_header

#ifndef _WASI_EMULATED_SIGNAL
#define _WASI_EMULATED_SIGNAL
#endif
#include_next <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

#define __NEED_size_t
#define __NEED_pid_t
#define __NEED_uid_t
#define __NEED_pthread_t
#define __NEED_clock_t
#define __NEED_sigset_t
#define __NEED_struct_timespec
#include <bits/alltypes.h>

/* How `sigprocmask` and `pthread_sigmask` change the mask. */
#define SIG_BLOCK 0
#define SIG_UNBLOCK 1
#define SIG_SETMASK 2

/* Where a signal came from (`si_code`). */
#define SI_USER 0
#define SI_QUEUE (-1)
#define SI_TIMER (-2)
#define SI_TKILL (-6)

/* `sa_flags`: the ones that mean something without an operating system
 * are honoured (`SA_SIGINFO`, `SA_NODEFER`, `SA_RESETHAND`); the others
 * are accepted and change nothing. */
#define SA_NOCLDSTOP 0x00000001
#define SA_NOCLDWAIT 0x00000002
#define SA_SIGINFO 0x00000004
#define SA_RESTORER 0x04000000
#define SA_ONSTACK 0x08000000
#define SA_RESTART 0x10000000
#define SA_NODEFER 0x40000000
#define SA_RESETHAND 0x80000000
#define SA_NOMASK SA_NODEFER
#define SA_ONESHOT SA_RESETHAND

/* `sigaltstack`: a handler runs on the thread's own stack. */
#define SS_ONSTACK 1
#define SS_DISABLE 2
#define MINSIGSTKSZ 2048
#define SIGSTKSZ 8192

union sigval {
    int sival_int;
    void *sival_ptr;
};

/* What a handler installed with `SA_SIGINFO` is told. */
typedef struct {
    int si_signo;
    int si_errno;
    int si_code;
    pid_t si_pid;
    uid_t si_uid;
    int si_status;
    void *si_addr;
    union sigval si_value;
    char __weft_reserved[96];
} siginfo_t;

struct sigaction {
    union {
        void (*sa_handler)(int);
        void (*sa_sigaction)(int, siginfo_t *, void *);
    } __sa_handler;
    sigset_t sa_mask;
    int sa_flags;
    void (*sa_restorer)(void);
};
#define sa_handler __sa_handler.sa_handler
#define sa_sigaction __sa_handler.sa_sigaction

typedef struct sigaltstack {
    void *ss_sp;
    int ss_flags;
    size_t ss_size;
} stack_t;

int sigemptyset(sigset_t *);
int sigfillset(sigset_t *);
int sigaddset(sigset_t *, int);
int sigdelset(sigset_t *, int);
int sigismember(const sigset_t *, int);
int sigisemptyset(const sigset_t *);
int sigorset(sigset_t *, const sigset_t *, const sigset_t *);
int sigandset(sigset_t *, const sigset_t *, const sigset_t *);

int sigaction(int, const struct sigaction *__restrict, struct sigaction *__restrict);
int sigprocmask(int, const sigset_t *__restrict, sigset_t *__restrict);
int pthread_sigmask(int, const sigset_t *__restrict, sigset_t *__restrict);
int sigpending(sigset_t *);
int sigsuspend(const sigset_t *);
int sigwait(const sigset_t *__restrict, int *__restrict);
int sigwaitinfo(const sigset_t *__restrict, siginfo_t *__restrict);
int sigaltstack(const stack_t *__restrict, stack_t *__restrict);
int siginterrupt(int, int);

int kill(pid_t, int);
int pthread_kill(pthread_t, int);

#ifdef __cplusplus
}
#endif

#endif
