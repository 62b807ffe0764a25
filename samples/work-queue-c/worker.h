/* The two sides of the work queue's job: producers queue the numbers of a
 * range, consumers add up what they pop. */
#ifndef WORKER_H
#define WORKER_H

#include "queue.h"

struct producer {
    struct queue *queue;
    int first, count;
};

struct consumer {
    struct queue *queue;
    long sum;
    int items;
};

void *produce(void *arg);
void *consume(void *arg);

#endif
