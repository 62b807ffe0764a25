/* A job that must start once: two workers check under the lock that it is
 * idle, release the lock, and then mark it running under the lock again.
 * Between the check and the update the other worker can check too, and the
 * job starts twice. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

enum state { IDLE, RUNNING, DONE };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static enum state job = IDLE;
static atomic_int starts;

static int is_idle(void) {
    pthread_mutex_lock(&lock);
    int idle = job == IDLE;
    pthread_mutex_unlock(&lock);
    return idle;
}

static void set_state(enum state next) {
    pthread_mutex_lock(&lock);
    job = next;
    pthread_mutex_unlock(&lock);
}

static void *worker(void *arg) {
    (void)arg;
    if (is_idle()) {
        set_state(RUNNING);
        atomic_fetch_add(&starts, 1);
        set_state(DONE);
    }
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("the job started %d time(s)\n", atomic_load(&starts));
    assert(atomic_load(&starts) == 1 && "the job started twice");
    return 0;
}
