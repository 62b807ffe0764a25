/* The alarm and sleeps on weft's virtual clock: `alarm` then `pause`
 * wakes when it rings; a sleep a signal cuts short says what was left
 * (`sleep`, `nanosleep` with `EINTR`); a periodic `setitimer` rings again;
 * a thread that blocks `SIGALRM` sleeps its whole sleep while another
 * takes the alarm. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static atomic_int rings;

static void on_alarm(int sig) {
    (void)sig;
    atomic_fetch_add(&rings, 1);
}

static void *sleeps_through(void *arg) {
    (void)arg;
    sigset_t alarm_only;
    sigemptyset(&alarm_only);
    sigaddset(&alarm_only, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alarm_only, NULL);
    /* Blocked here: the alarm goes to another thread. */
    assert(sleep(4) == 0);
    return NULL;
}

int main(void) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_alarm;
    sigaction(SIGALRM, &act, NULL);

    /* alarm, then pause until it rings. */
    assert(alarm(2) == 0);
    assert(alarm(2) == 2);
    assert(pause() == -1 && errno == EINTR);
    assert(atomic_load(&rings) == 1);

    /* A sleep the alarm cuts short: 10 s asked, 7 left. */
    alarm(3);
    assert(sleep(10) == 7);
    assert(atomic_load(&rings) == 2);

    /* nanosleep cut short: EINTR, and what was left. */
    alarm(1);
    struct timespec ask = {.tv_sec = 5, .tv_nsec = 0}, left;
    assert(nanosleep(&ask, &left) == -1 && errno == EINTR);
    assert(left.tv_sec == 4 && left.tv_nsec == 0);
    assert(atomic_load(&rings) == 3);

    /* A periodic timer rings every half second while the thread waits. */
    struct itimerval every = {.it_interval = {0, 500000}, .it_value = {0, 500000}}, old;
    assert(setitimer(ITIMER_REAL, &every, NULL) == 0);
    pause();
    pause();
    assert(atomic_load(&rings) == 5);
    assert(getitimer(ITIMER_REAL, &old) == 0);
    assert(old.it_interval.tv_sec == 0 && old.it_interval.tv_usec == 500000);
    struct itimerval off;
    memset(&off, 0, sizeof off);
    assert(setitimer(ITIMER_REAL, &off, &old) == 0);
    assert(old.it_interval.tv_usec == 500000);
    assert(setitimer(ITIMER_VIRTUAL, &off, NULL) == -1 && errno == EINVAL);

    /* The main thread waits for a thread that blocks the alarm: the main
     * thread takes it, the other sleeps on. */
    pthread_t sleeper;
    pthread_create(&sleeper, NULL, sleeps_through, NULL);
    alarm(1);
    pthread_join(sleeper, NULL);
    assert(atomic_load(&rings) == 6);
    return 0;
}
