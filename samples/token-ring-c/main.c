/* A ring of stations passing a token: each station takes the count from its
 * inbox and puts count + 1 in the next station's inbox, once. The stations
 * start together and none waits for its inbox to be filled, so a station
 * may forward a stale count: the last inbox then holds less than the
 * number of stations. Only some orders of the stations show it. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define STATIONS 4

static atomic_int inbox[STATIONS + 1];

static void *station(void *arg) {
    int me = (int)(long)arg;
    int count = atomic_load(&inbox[me]);
    atomic_store(&inbox[me + 1], count + 1);
    return NULL;
}

int main(void) {
    pthread_t threads[STATIONS];
    for (long i = 0; i < STATIONS; i++)
        pthread_create(&threads[i], NULL, station, (void *)i);
    for (int i = 0; i < STATIONS; i++)
        pthread_join(threads[i], NULL);
    int last = atomic_load(&inbox[STATIONS]);
    printf("the token went round with count %d\n", last);
    assert(last == STATIONS && "a station forwarded a stale count");
    return 0;
}
