/* Each worker is meant to count into its own statistics slot, chosen by a
 * hash of its name; two names land in the same slot, so two workers update
 * one slot through their own pointers without a lock. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define SLOTS 4

struct stats {
    int requests;
    int bytes;
};

static struct stats slots[SLOTS];

struct job {
    const char *name;
    int size;
};

static struct stats *slot_for(const char *name) {
    unsigned hash = 0;
    for (size_t i = 0; i < strlen(name); i++)
        hash = hash * 31 + (unsigned char)name[i];
    return &slots[hash % SLOTS];
}

static void *worker(void *arg) {
    struct job *job = arg;
    struct stats *mine = slot_for(job->name);
    mine->requests += 1;
    mine->bytes += job->size;
    return NULL;
}

int main(void) {
    /* "ab" and "bC" hash to the same slot. */
    struct job jobs[2] = {{"ab", 100}, {"bC", 200}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&threads[i], NULL, worker, &jobs[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < SLOTS; i++)
        printf("slot %d: %d requests, %d bytes\n", i, slots[i].requests, slots[i].bytes);
    return 0;
}
