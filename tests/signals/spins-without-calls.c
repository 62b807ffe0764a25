/* A thread spins on a flag that only its signal handler sets, calling
 * nothing. Linux would interrupt the loop to run the handler; weft runs a
 * handler only where the thread calls the library or the host, so the
 * signal stays pending: the run is inconclusive and says why, rather than
 * a livelock the program does not have. */
#include <pthread.h>
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t got;

static void on_usr1(int sig) {
    (void)sig;
    got = 1;
}

static void *spinner(void *arg) {
    (void)arg;
    while (!got) {
    }
    return NULL;
}

int main(void) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_usr1;
    sigaction(SIGUSR1, &act, NULL);
    pthread_t t;
    pthread_create(&t, NULL, spinner, NULL);
    pthread_kill(t, SIGUSR1);
    pthread_join(t, NULL);
    return 0;
}
