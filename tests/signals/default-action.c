/* SIGUSR2 has no handler: its default action ends the process, as it
 * would natively, whichever thread it is sent to. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

static void *worker(void *arg) {
    (void)arg;
    return NULL;
}

int main(void) {
    pthread_t thread;
    pthread_create(&thread, NULL, worker, NULL);
    pthread_kill(pthread_self(), SIGUSR2);
    pthread_join(thread, NULL);
    puts("not reached");
    return 0;
}
