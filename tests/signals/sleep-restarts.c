/* A sleep is cut short (EINTR) only when a signal is delivered to the
 * sleeper. A signal sent to the process wakes the sleeper, which does not
 * block it, but another thread that does not block it either may take it
 * first: then the sleeper sleeps on and its sleep returns 0, as Linux
 * restarts a sleep that no handler interrupted. (The signal may also come
 * before the sleep, or after both threads ended: it stays pending.) */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_t sleeper_thread;
static _Atomic int handled_by_sleeper;
static _Atomic int handled;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void on_usr1(int sig) {
    (void)sig;
    if (pthread_equal(pthread_self(), sleeper_thread))
        atomic_store(&handled_by_sleeper, 1);
    atomic_fetch_add(&handled, 1);
}

static void *sleeper(void *arg) {
    (void)arg;
    struct timespec ts = {10, 0}, left = {0, 0};
    int before = atomic_load(&handled_by_sleeper);
    int r = nanosleep(&ts, &left);
    int during = atomic_load(&handled_by_sleeper) != before;
    if (r == -1) {
        assert(errno == EINTR);
        assert(during);
        assert(left.tv_sec > 0 && left.tv_sec <= 10);
    } else {
        assert(r == 0);
    }
    return NULL;
}

static void *busy(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&lock);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(void) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_usr1;
    sigaction(SIGUSR1, &act, NULL);
    pthread_t b;
    pthread_create(&sleeper_thread, NULL, sleeper, NULL);
    pthread_create(&b, NULL, busy, NULL);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    kill(getpid(), SIGUSR1);
    pthread_join(sleeper_thread, NULL);
    pthread_join(b, NULL);
    assert(atomic_load(&handled) <= 1);
    return 0;
}
