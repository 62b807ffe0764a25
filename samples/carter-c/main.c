/* Two teams share a room, one team at a time: the first member of a team
 * to arrive locks the room, the last to leave unlocks it, and each team
 * counts who is inside. Both teams count under the same mutex, and the
 * first arrival waits for the room while holding it: if the other team is
 * inside, its last member cannot get the mutex to leave. Deadlock. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define MEMBERS 2

static pthread_mutex_t room = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static int inside[2];
static atomic_int visits[2];

static void enter(int team) {
    pthread_mutex_lock(&count_lock);
    if (++inside[team] == 1)
        pthread_mutex_lock(&room); /* waits holding count_lock */
    pthread_mutex_unlock(&count_lock);
}

static void leave(int team) {
    pthread_mutex_lock(&count_lock);
    if (--inside[team] == 0)
        pthread_mutex_unlock(&room);
    pthread_mutex_unlock(&count_lock);
}

static void *member(void *arg) {
    int team = (int)(long)arg;
    enter(team);
    atomic_fetch_add(&visits[team], 1);
    leave(team);
    return NULL;
}

int main(void) {
    pthread_t threads[2 * MEMBERS];
    for (int i = 0; i < 2 * MEMBERS; i++)
        pthread_create(&threads[i], NULL, member, (void *)(long)(i % 2));
    for (int i = 0; i < 2 * MEMBERS; i++)
        pthread_join(threads[i], NULL);
    printf("visits: %d and %d\n", atomic_load(&visits[0]), atomic_load(&visits[1]));
    return 0;
}
