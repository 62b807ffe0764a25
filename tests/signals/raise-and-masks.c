/* One thread's own signals: `raise` runs the handler before it returns; a
 * blocked signal stays pending until the mask lets it through, and is
 * delivered before `sigprocmask` returns; SA_RESETHAND, SIG_IGN and the
 * old action `sigaction` gives back. */
#include <assert.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t last, calls;

static void on_signal(int sig) {
    last = sig;
    calls++;
}

static void on_info(int sig, siginfo_t *info, void *context) {
    (void)context;
    assert(info->si_signo == sig);
    last = sig;
    calls++;
}

int main(void) {
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_signal;
    sigemptyset(&act.sa_mask);
    assert(sigaction(SIGUSR1, &act, NULL) == 0);
    assert(raise(SIGUSR1) == 0);
    assert(last == SIGUSR1 && calls == 1);

    /* Blocked: pending, then delivered as the mask lets it through. */
    sigset_t block, pending;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    assert(sigprocmask(SIG_BLOCK, &block, NULL) == 0);
    raise(SIGUSR1);
    assert(calls == 1);
    sigpending(&pending);
    assert(sigismember(&pending, SIGUSR1) == 1);
    assert(sigprocmask(SIG_UNBLOCK, &block, NULL) == 0);
    assert(calls == 2);
    sigpending(&pending);
    assert(sigismember(&pending, SIGUSR1) == 0);

    /* Once, then the default again; the old action comes back. */
    act.sa_flags = SA_RESETHAND;
    assert(sigaction(SIGUSR2, &act, &old) == 0);
    assert(old.sa_handler == SIG_DFL);
    raise(SIGUSR2);
    assert(last == SIGUSR2 && calls == 3);
    sigaction(SIGUSR2, NULL, &old);
    assert(old.sa_handler == SIG_DFL);

    /* Ignored: discarded. */
    signal(SIGUSR2, SIG_IGN);
    raise(SIGUSR2);
    assert(calls == 3);

    /* With its information. */
    memset(&act, 0, sizeof act);
    act.sa_sigaction = on_info;
    act.sa_flags = SA_SIGINFO;
    sigaction(SIGALRM, &act, NULL);
    raise(SIGALRM);
    assert(last == SIGALRM && calls == 4);

    /* Neither SIGKILL nor SIGSTOP takes a handler. */
    assert(sigaction(SIGKILL, &act, NULL) == -1);
    printf("%d signals handled\n", (int)calls);
    return 0;
}
