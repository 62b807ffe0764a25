#include "queue.h"

#include <pthread.h>
#include <stdlib.h>

struct queue {
    pthread_mutex_t lock;
    pthread_cond_t not_full, not_empty;
    int *items;
    size_t capacity, head, len;
    bool closed;
};

struct queue *queue_new(size_t capacity) {
    struct queue *q = calloc(1, sizeof *q);
    if (q == NULL)
        return NULL;
    q->items = calloc(capacity, sizeof *q->items);
    if (q->items == NULL) {
        free(q);
        return NULL;
    }
    q->capacity = capacity;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->not_full, NULL);
    pthread_cond_init(&q->not_empty, NULL);
    return q;
}

void queue_free(struct queue *q) {
    pthread_cond_destroy(&q->not_empty);
    pthread_cond_destroy(&q->not_full);
    pthread_mutex_destroy(&q->lock);
    free(q->items);
    free(q);
}

bool queue_push(struct queue *q, int item) {
    pthread_mutex_lock(&q->lock);
    while (q->len == q->capacity && !q->closed)
        pthread_cond_wait(&q->not_full, &q->lock);
    bool open = !q->closed;
    if (open) {
        q->items[(q->head + q->len) % q->capacity] = item;
        q->len++;
        pthread_cond_signal(&q->not_empty);
    }
    pthread_mutex_unlock(&q->lock);
    return open;
}

bool queue_pop(struct queue *q, int *item) {
    pthread_mutex_lock(&q->lock);
    while (q->len == 0 && !q->closed)
        pthread_cond_wait(&q->not_empty, &q->lock);
    bool got = q->len > 0;
    if (got) {
        *item = q->items[q->head];
        q->head = (q->head + 1) % q->capacity;
        q->len--;
        pthread_cond_signal(&q->not_full);
    }
    pthread_mutex_unlock(&q->lock);
    return got;
}

void queue_close(struct queue *q) {
    pthread_mutex_lock(&q->lock);
    q->closed = true;
    pthread_cond_broadcast(&q->not_empty);
    pthread_cond_broadcast(&q->not_full);
    pthread_mutex_unlock(&q->lock);
}
