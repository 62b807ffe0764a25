/* A configuration created on first use: the "already created?" check and
 * the publication are separate steps, so two threads can both create it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include "weft.h"

struct config {
    int workers;
};

static _Atomic(struct config *) current_config;
static atomic_int loads;

static struct config *load_config(void) {
    atomic_fetch_add(&loads, 1);
    struct config *c = malloc(sizeof *c);
    c->workers = 4;
    return c;
}

static struct config *config(void) {
    struct config *c = atomic_load(&current_config);
    if (c == NULL) {
        c = load_config();
        atomic_store(&current_config, c);
    }
    return c;
}

static void *user(void *name) {
    weft_thread_name(name);
    return (void *)(long)config()->workers;
}

int main(void) {
    pthread_t reader, writer;
    pthread_create(&reader, NULL, user, "reader");
    pthread_create(&writer, NULL, user, "writer");
    pthread_join(reader, NULL);
    pthread_join(writer, NULL);
    printf("loads: %d\n", atomic_load(&loads));
    weft_assert(atomic_load(&loads) == 1, "the configuration was loaded more than once");
    return 0;
}
