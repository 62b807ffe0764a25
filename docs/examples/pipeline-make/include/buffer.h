/* A bounded buffer of ints, shared by producer and consumer threads. */
#ifndef BUFFER_H
#define BUFFER_H

#include <pthread.h>

#define BUFFER_CAPACITY 4

struct buffer {
    int items[BUFFER_CAPACITY];
    int head;  /* next item to take */
    int count; /* items held */
    pthread_mutex_t lock;
    pthread_cond_t not_empty;
    pthread_cond_t not_full;
};

void buffer_init(struct buffer *b);
void buffer_put(struct buffer *b, int item);
int buffer_take(struct buffer *b);

#endif
