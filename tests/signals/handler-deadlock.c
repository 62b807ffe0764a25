/* A handler that takes a lock the thread it interrupted holds: the thread
 * waits for itself (a deadlock, as natively; handlers should take no
 * lock). */
#include <pthread.h>
#include <signal.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int total;

static void on_usr1(int sig) {
    (void)sig;
    pthread_mutex_lock(&lock);
    total++;
    pthread_mutex_unlock(&lock);
}

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&lock);
        total++;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(void) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_usr1;
    sigaction(SIGUSR1, &act, NULL);
    pthread_t thread;
    pthread_create(&thread, NULL, worker, NULL);
    pthread_kill(thread, SIGUSR1);
    pthread_join(thread, NULL);
    return 0;
}
