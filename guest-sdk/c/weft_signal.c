/*
 * `strsignal` and `psignal` for wasi-libc's signal emulation (`signal` and
 * `raise` within the program), which `weft build` switches on: the
 * emulation's default handler names the signal with `strsignal`, which the
 * threaded wasi-libc does not have.
 */
#ifdef _WASI_EMULATED_SIGNAL
#include <signal.h>
#include <stdio.h>
#include <string.h>

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
#endif
