/*
 * Signals within the program, for the threads of one process as POSIX and
 * Linux have them (declared in weft's <signal.h>). weft keeps what each
 * signal does, each thread's mask and what is pending (the `weft_signal`
 * imports); this file keeps the handlers and calls them when weft delivers
 * a signal (`weft_signal_deliver`, which weft calls on the receiving
 * thread, at a scheduling point the schedule chose). No signal comes from
 * outside the program.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define WEFT_SIGNAL_IMPORT(name) \
    __attribute__((import_module("weft_signal"), import_name(name)))

/* What a signal does: 0 its default action, 1 nothing, 2 its handler. */
WEFT_SIGNAL_IMPORT("action")
int weft_signal_action(int sig, int kind, int mask_lo, int mask_hi, int flags);
/* Changes the calling thread's mask (`how`: SIG_BLOCK, SIG_UNBLOCK,
 * SIG_SETMASK, or -1 to read it); returns the mask before. */
WEFT_SIGNAL_IMPORT("mask")
long long weft_signal_mask(int how, int lo, int hi);
/* Sends `sig` to the thread `thread` (-1: the process); returns 0 or an
 * errno value. */
WEFT_SIGNAL_IMPORT("send")
int weft_signal_send(int thread, int sig);
/* The signals pending for the calling thread or the process. */
WEFT_SIGNAL_IMPORT("pending")
long long weft_signal_pending(void);
/* `mode` 0: waits for a signal of the set and takes it (`sigwait`); mode
 * 1: waits with the set as the mask until a signal is delivered
 * (`sigsuspend`). Returns the signal. */
WEFT_SIGNAL_IMPORT("wait")
int weft_signal_wait(int lo, int hi, int mode);
/* The calling thread's id. */
WEFT_SIGNAL_IMPORT("thread")
int weft_signal_thread(void);

/* Signal numbers run from 1 to this. */
#define LAST_SIGNAL 64

/* SIG_IGN and SIG_ERR: wasi-libc's header names them as functions, since
 * 1 and -1 could be real function pointers on wasm. */
void __SIG_IGN(int sig) { (void)sig; }
_Noreturn void __SIG_ERR(int sig) { (void)sig; __builtin_trap(); }

/* The actions the program installed, by signal; weft knows their kinds,
 * masks and flags, this table their handlers. */
static struct sigaction actions[LAST_SIGNAL + 1];

static int valid(int sig) { return sig >= 1 && sig <= LAST_SIGNAL; }

void weft_signal_deliver(int sig, int code);

static unsigned long long bits_of(const sigset_t *set)
{
    const unsigned char *bytes = (const unsigned char *)set;
    unsigned long long bits = 0;
    memcpy(&bits, bytes, sizeof bits);
    return bits;
}

static void set_bits(sigset_t *set, unsigned long long bits)
{
    memset(set, 0, sizeof *set);
    memcpy((unsigned char *)set, &bits, sizeof bits);
}

static unsigned long long bit_of(int sig) { return 1ULL << (sig - 1); }

int sigemptyset(sigset_t *set)
{
    memset(set, 0, sizeof *set);
    return 0;
}

int sigfillset(sigset_t *set)
{
    set_bits(set, ~0ULL);
    return 0;
}

int sigaddset(sigset_t *set, int sig)
{
    if (!valid(sig)) {
        errno = EINVAL;
        return -1;
    }
    set_bits(set, bits_of(set) | bit_of(sig));
    return 0;
}

int sigdelset(sigset_t *set, int sig)
{
    if (!valid(sig)) {
        errno = EINVAL;
        return -1;
    }
    set_bits(set, bits_of(set) & ~bit_of(sig));
    return 0;
}

int sigismember(const sigset_t *set, int sig)
{
    if (!valid(sig)) {
        errno = EINVAL;
        return -1;
    }
    return (bits_of(set) & bit_of(sig)) != 0;
}

int sigisemptyset(const sigset_t *set) { return bits_of(set) == 0; }

int sigorset(sigset_t *dest, const sigset_t *left, const sigset_t *right)
{
    set_bits(dest, bits_of(left) | bits_of(right));
    return 0;
}

int sigandset(sigset_t *dest, const sigset_t *left, const sigset_t *right)
{
    set_bits(dest, bits_of(left) & bits_of(right));
    return 0;
}

int sigaction(int sig, const struct sigaction *restrict act, struct sigaction *restrict old)
{
    if (!valid(sig) || (act && (sig == SIGKILL || sig == SIGSTOP))) {
        errno = EINVAL;
        return -1;
    }
    if (old)
        *old = actions[sig];
    if (act) {
        /* What weft calls to deliver a signal: linked in with `sigaction`. */
        static void (*volatile deliver)(int, int) = weft_signal_deliver;
        (void)deliver;
        actions[sig] = *act;
        int kind = act->sa_handler == SIG_DFL ? 0 : act->sa_handler == SIG_IGN ? 1 : 2;
        unsigned long long mask = bits_of(&act->sa_mask);
        weft_signal_action(sig, kind, (int)mask, (int)(mask >> 32), act->sa_flags);
    }
    return 0;
}

void (*signal(int sig, void (*handler)(int)))(int)
{
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART;
    if (sigaction(sig, &act, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

extern __typeof(signal) bsd_signal __attribute__((weak, alias("signal")));
extern __typeof(signal) __sysv_signal __attribute__((weak, alias("signal")));

int siginterrupt(int sig, int interrupt)
{
    struct sigaction act;
    if (sigaction(sig, NULL, &act) != 0)
        return -1;
    if (interrupt)
        act.sa_flags &= ~SA_RESTART;
    else
        act.sa_flags |= SA_RESTART;
    return sigaction(sig, &act, NULL);
}

int pthread_sigmask(int how, const sigset_t *restrict set, sigset_t *restrict old)
{
    long long before;
    if (set) {
        if (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
            return EINVAL;
        unsigned long long bits = bits_of(set);
        before = weft_signal_mask(how, (int)bits, (int)(bits >> 32));
    } else {
        before = weft_signal_mask(-1, 0, 0);
    }
    if (old)
        set_bits(old, (unsigned long long)before);
    return 0;
}

int sigprocmask(int how, const sigset_t *restrict set, sigset_t *restrict old)
{
    int error = pthread_sigmask(how, set, old);
    if (error) {
        errno = error;
        return -1;
    }
    return 0;
}

int sigpending(sigset_t *set)
{
    set_bits(set, (unsigned long long)weft_signal_pending());
    return 0;
}

int sigsuspend(const sigset_t *mask)
{
    unsigned long long bits = bits_of(mask);
    weft_signal_wait((int)bits, (int)(bits >> 32), 1);
    errno = EINTR;
    return -1;
}

int sigwait(const sigset_t *restrict set, int *restrict sig)
{
    unsigned long long bits = bits_of(set);
    *sig = weft_signal_wait((int)bits, (int)(bits >> 32), 0);
    return 0;
}

int sigwaitinfo(const sigset_t *restrict set, siginfo_t *restrict info)
{
    int sig;
    sigwait(set, &sig);
    if (info) {
        memset(info, 0, sizeof *info);
        info->si_signo = sig;
        info->si_code = SI_USER;
        info->si_pid = getpid();
    }
    return sig;
}

int sigaltstack(const stack_t *restrict stack, stack_t *restrict old)
{
    /* A handler runs on its thread's own stack: an alternate stack is
     * accepted and not used. */
    if (stack && (stack->ss_flags & ~SS_DISABLE)) {
        errno = EINVAL;
        return -1;
    }
    if (old) {
        memset(old, 0, sizeof *old);
        old->ss_flags = SS_DISABLE;
    }
    return 0;
}

/* The first fields of wasi-libc's thread descriptor, up to the id weft
 * gave the thread (a `pthread_t` points to it). */
struct descriptor_head {
    void *self;
    void *prev, *next;
    uintptr_t sysinfo;
    uintptr_t canary;
    int tid;
};

/* The id wasi-libc gives the main thread, which is weft's thread 0. */
#define MAIN_THREAD_TID 0x3fffffff

/* weft's id of the thread whose descriptor is `thread`. */
static int descriptor_id(pthread_t thread)
{
    int tid = ((struct descriptor_head *)thread)->tid;
    return tid == MAIN_THREAD_TID ? 0 : tid;
}

/* weft's id of the thread `thread`. */
static int thread_id(pthread_t thread)
{
    static int checked;
    if (!checked) {
        /* The descriptor's layout is wasi-libc's; a libc that laid it out
         * otherwise would send signals to the wrong threads. */
        if (descriptor_id(pthread_self()) != weft_signal_thread()) {
            fputs("weft: this C library's thread descriptor is not laid out as weft expects;"
                  " pthread_kill cannot find its thread\n", stderr);
            __builtin_trap();
        }
        checked = 1;
    }
    return descriptor_id(thread);
}

int pthread_kill(pthread_t thread, int sig)
{
    if (sig != 0 && !valid(sig))
        return EINVAL;
    return weft_signal_send(thread_id(thread), sig);
}

int raise(int sig)
{
    int error = pthread_kill(pthread_self(), sig);
    if (error) {
        errno = error;
        return -1;
    }
    return 0;
}

int kill(pid_t pid, int sig)
{
    if (sig != 0 && !valid(sig)) {
        errno = EINVAL;
        return -1;
    }
    /* The program is the only process, and its own group. */
    if (pid != getpid() && pid != 0 && pid != -1 && pid != -getpid()) {
        errno = ESRCH;
        return -1;
    }
    int error = weft_signal_send(-1, sig);
    if (error) {
        errno = error;
        return -1;
    }
    return 0;
}

/* Runs the handler of `sig` on the calling thread: weft calls it (through
 * the entry its rewrite adds, which keeps the interrupted code's frame)
 * where it delivers the signal, with the thread's mask already the
 * handler's. `sigaction` keeps it in the program. */
void weft_signal_deliver(int sig, int code)
{
    struct sigaction act = actions[sig];
    if (act.sa_flags & SA_RESETHAND) {
        memset(&actions[sig], 0, sizeof actions[sig]);
        actions[sig].sa_handler = SIG_DFL;
    }
    if (act.sa_flags & SA_SIGINFO) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        info.si_signo = sig;
        info.si_code = code;
        info.si_pid = getpid();
        act.sa_sigaction(sig, &info, NULL);
    } else if (act.sa_handler != SIG_DFL && act.sa_handler != SIG_IGN) {
        act.sa_handler(sig);
    }
}

char *strsignal(int sig)
{
    switch (sig) {
    case SIGHUP: return "Hangup";
    case SIGINT: return "Interrupt";
    case SIGQUIT: return "Quit";
    case SIGILL: return "Illegal instruction";
    case SIGTRAP: return "Trace/breakpoint trap";
    case SIGABRT: return "Aborted";
    case SIGBUS: return "Bus error";
    case SIGFPE: return "Floating point exception";
    case SIGKILL: return "Killed";
    case SIGUSR1: return "User defined signal 1";
    case SIGSEGV: return "Segmentation fault";
    case SIGUSR2: return "User defined signal 2";
    case SIGPIPE: return "Broken pipe";
    case SIGALRM: return "Alarm clock";
    case SIGTERM: return "Terminated";
    case SIGCHLD: return "Child process status";
    case SIGCONT: return "Continued";
    case SIGSTOP: return "Stopped (signal)";
    case SIGTSTP: return "Stopped";
    case SIGTTIN: return "Stopped (tty input)";
    case SIGTTOU: return "Stopped (tty output)";
    case SIGURG: return "Urgent I/O condition";
    case SIGXCPU: return "CPU time limit exceeded";
    case SIGXFSZ: return "File size limit exceeded";
    case SIGVTALRM: return "Virtual timer expired";
    case SIGPROF: return "Profiling timer expired";
    case SIGWINCH: return "Window changed";
    case SIGIO: return "I/O possible";
    case SIGPWR: return "Power failure";
    case SIGSYS: return "Bad system call";
    default: return "Unknown signal";
    }
}

void psignal(int sig, const char *message)
{
    if (message && *message)
        fprintf(stderr, "%s: %s\n", message, strsignal(sig));
    else
        fprintf(stderr, "%s\n", strsignal(sig));
}
