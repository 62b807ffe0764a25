#include "worker.h"

void *produce(void *arg) {
    struct producer *p = arg;
    for (int i = 0; i < p->count; i++)
        if (!queue_push(p->queue, p->first + i))
            break;
    return NULL;
}

void *consume(void *arg) {
    struct consumer *c = arg;
    int item;
    while (queue_pop(c->queue, &item)) {
        c->sum += item;
        c->items++;
    }
    return NULL;
}
