/* A producer hands one allocated message to a consumer through a plain
 * pointer that the consumer polls: nothing orders the two. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct message {
    int number;
};

static struct message *mailbox;

static void *producer(void *arg)
{
    (void)arg;
    struct message *m = malloc(sizeof *m);
    m->number = 42;
    mailbox = m; /* RACE on mailbox */
    return NULL;
}

static void *consumer(void *arg)
{
    int *got = arg;
    for (int tries = 0; tries < 3; tries++) {
        struct message *m = mailbox; /* RACE on mailbox */
        if (m) {
            *got = m->number;
            free(m);
            return NULL;
        }
        usleep(10);
    }
    return NULL;
}

int main(void)
{
    int got = 0;
    pthread_t p, c;
    pthread_create(&c, NULL, consumer, &got);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    printf("got %d\n", got);
    return 0;
}
