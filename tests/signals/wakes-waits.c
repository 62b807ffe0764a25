/* A signal wakes a thread that waits: one in `pthread_cond_wait` runs its
 * handler and waits on (the wake is a spurious one to the condition
 * variable), one in `sigsuspend` returns once the handler ran. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready;
static atomic_int handled;

static void on_usr1(int sig) {
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

static void *waits_on_condition(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lock);
    while (!ready)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void *suspends(void *arg) {
    (void)arg;
    sigset_t usr1, others;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    sigemptyset(&others);
    /* Waits, SIGUSR1 unblocked, until a handler ran. */
    int r = sigsuspend(&others);
    assert(r == -1 && errno == EINTR);
    return NULL;
}

int main(void) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_usr1;
    sigaction(SIGUSR1, &act, NULL);
    pthread_t a, b;
    pthread_create(&a, NULL, waits_on_condition, NULL);
    pthread_create(&b, NULL, suspends, NULL);
    pthread_kill(a, SIGUSR1);
    pthread_kill(b, SIGUSR1);
    pthread_join(b, NULL);
    pthread_mutex_lock(&lock);
    ready = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    pthread_join(a, NULL);
    assert(atomic_load(&handled) == 2);
    return 0;
}
