/* A producer allocates messages and a consumer frees them, handed over
 * through a queue under a mutex and a condition variable. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MESSAGES 4

struct message {
    struct message *next;
    int number;
    char text[24];
};

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_filled = PTHREAD_COND_INITIALIZER;
static struct message *head;

static void *producer(void *arg)
{
    (void)arg;
    for (int i = 0; i < MESSAGES; i++) {
        struct message *m = malloc(sizeof *m);
        m->number = i;
        snprintf(m->text, sizeof m->text, "message %d", i);
        pthread_mutex_lock(&queue_lock);
        m->next = head;
        head = m;
        pthread_cond_signal(&queue_filled);
        pthread_mutex_unlock(&queue_lock);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    int *sum = arg;
    for (int got = 0; got < MESSAGES; got++) {
        pthread_mutex_lock(&queue_lock);
        while (!head)
            pthread_cond_wait(&queue_filled, &queue_lock);
        struct message *m = head;
        head = m->next;
        pthread_mutex_unlock(&queue_lock);
        *sum += m->number + (int)strlen(m->text);
        free(m);
        /* The freed block may come back to the producer at once. */
        char *scratch = malloc(32);
        strcpy(scratch, "scratch");
        free(scratch);
    }
    return NULL;
}

int main(void)
{
    int sum = 0;
    pthread_t p, c;
    pthread_create(&c, NULL, consumer, &sum);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    printf("sum = %d\n", sum);
    return sum == 6 + 4 * 9 ? 0 : 1;
}
