/* Two producers queue 1..8 through a queue of two slots to two consumers;
 * main closes the queue once both producers are done. Every number is
 * consumed exactly once. */
#include "queue.h"
#include "worker.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>

int main(void) {
    struct queue *queue = queue_new(2);
    assert(queue != NULL);
    struct producer producers[2] = {{queue, 1, 4}, {queue, 5, 4}};
    struct consumer consumers[2] = {{queue, 0, 0}, {queue, 0, 0}};
    pthread_t p[2], c[2];
    for (int i = 0; i < 2; i++) {
        pthread_create(&c[i], NULL, consume, &consumers[i]);
        pthread_create(&p[i], NULL, produce, &producers[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(p[i], NULL);
    queue_close(queue);
    for (int i = 0; i < 2; i++)
        pthread_join(c[i], NULL);
    queue_free(queue);
    long sum = consumers[0].sum + consumers[1].sum;
    int items = consumers[0].items + consumers[1].items;
    printf("%d items, sum %ld\n", items, sum);
    assert(items == 8 && sum == 36);
    return 0;
}
