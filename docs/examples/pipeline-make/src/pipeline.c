/* Two producers and two consumers pass the numbers 1..N through a bounded
 * buffer; the consumers count what they took. */
#include <assert.h>
#include <stdio.h>

#include "buffer.h"
#include "stats.h"

#define PER_PRODUCER 3

static struct buffer buffer;

static void *produce(void *arg)
{
    int first = *(int *)arg;
    for (int i = 0; i < PER_PRODUCER; i++)
        buffer_put(&buffer, first + i);
    return NULL;
}

static void *consume(void *arg)
{
    (void)arg;
    for (int i = 0; i < PER_PRODUCER; i++)
        stats_record(buffer_take(&buffer));
    return NULL;
}

int main(void)
{
    pthread_t producers[2], consumers[2];
    int firsts[2] = {1, 1 + PER_PRODUCER};
    buffer_init(&buffer);
    for (int i = 0; i < 2; i++) {
        pthread_create(&producers[i], NULL, produce, &firsts[i]);
        pthread_create(&consumers[i], NULL, consume, NULL);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(producers[i], NULL);
        pthread_join(consumers[i], NULL);
    }
    int n = 2 * PER_PRODUCER;
    printf("%d items, total %ld\n", stats_items(), stats_total());
    assert(stats_items() == n);
    assert(stats_total() == (long)n * (n + 1) / 2);
    return 0;
}
