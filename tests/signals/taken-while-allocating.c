/* A signal sent to the process is taken by the one thread that does not
 * block it, though that thread calls nothing but the allocator: it grows
 * and shrinks a list until its handler says the signal came, as a thread
 * working on a data structure does while another signals the process. */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node {
    struct node *next;
    int value;
};

static volatile sig_atomic_t arrived;
static pthread_t worker_thread;
static volatile int handled_elsewhere;

static void on_term(int sig) {
    (void)sig;
    if (!pthread_equal(pthread_self(), worker_thread))
        handled_elsewhere = 1;
    arrived = 1;
}

static void *worker(void *arg) {
    (void)arg;
    struct node *list = NULL;
    int length = 0;
    while (!arrived) {
        struct node *n = malloc(sizeof *n);
        n->value = length;
        n->next = list;
        list = n;
        if (++length == 4) {
            while (list) {
                struct node *next = list->next;
                free(list);
                list = next;
            }
            length = 0;
        }
    }
    while (list) {
        struct node *next = list->next;
        free(list);
        list = next;
    }
    return NULL;
}

int main(void) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_term;
    sigaction(SIGTERM, &act, NULL);
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    /* The worker inherits the mask it is created with: it is created
     * before the main thread blocks the signal. */
    pthread_create(&worker_thread, NULL, worker, NULL);
    pthread_sigmask(SIG_BLOCK, &term, NULL);
    kill(getpid(), SIGTERM);
    pthread_join(worker_thread, NULL);
    assert(arrived);
    assert(!handled_elsewhere);
    return 0;
}
