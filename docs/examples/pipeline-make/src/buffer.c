#include "buffer.h"

void buffer_init(struct buffer *b)
{
    b->head = 0;
    b->count = 0;
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->not_empty, NULL);
    pthread_cond_init(&b->not_full, NULL);
}

void buffer_put(struct buffer *b, int item)
{
    pthread_mutex_lock(&b->lock);
    while (b->count == BUFFER_CAPACITY)
        pthread_cond_wait(&b->not_full, &b->lock);
    b->items[(b->head + b->count) % BUFFER_CAPACITY] = item;
    b->count++;
    pthread_cond_signal(&b->not_empty);
    pthread_mutex_unlock(&b->lock);
}

int buffer_take(struct buffer *b)
{
    pthread_mutex_lock(&b->lock);
    while (b->count == 0)
        pthread_cond_wait(&b->not_empty, &b->lock);
    int item = b->items[b->head];
    b->head = (b->head + 1) % BUFFER_CAPACITY;
    b->count--;
    pthread_cond_signal(&b->not_full);
    pthread_mutex_unlock(&b->lock);
    return item;
}
