/* A thread pool's pause: each worker waits on a condition variable; the
 * main thread sends each one SIGUSR1 once all wait, and the handler holds
 * the worker until the main thread resumes them. A worker blocked in the
 * wait takes the signal there, inside `pthread_cond_wait`, before it takes
 * the mutex back (as Linux delivers to a thread blocked in the kernel), so
 * the held workers hold no mutex and the main thread can wake them. */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define WORKERS 3

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static int waiting, ready;
static atomic_int held, resumed;

static void hold(int sig) {
    (void)sig;
    atomic_fetch_add(&held, 1);
    while (!atomic_load(&resumed))
        sched_yield();
}

static void *worker(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lock);
    waiting++;
    while (!ready)
        pthread_cond_wait(&work, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = hold;
    sigaction(SIGUSR1, &act, NULL);
    pthread_t workers[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&workers[i], NULL, worker, NULL);
    /* Once the main thread holds the mutex and counts them all, every
     * worker is inside its wait. */
    for (;;) {
        pthread_mutex_lock(&lock);
        int all = waiting == WORKERS;
        pthread_mutex_unlock(&lock);
        if (all)
            break;
        sched_yield();
    }
    for (int i = 0; i < WORKERS; i++)
        pthread_kill(workers[i], SIGUSR1);
    while (atomic_load(&held) < WORKERS)
        sched_yield();
    atomic_store(&resumed, 1);
    pthread_mutex_lock(&lock);
    ready = 1;
    pthread_cond_broadcast(&work);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(workers[i], NULL);
    return 0;
}
