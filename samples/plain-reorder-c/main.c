/* A setter publishes a version and its checksum in two plain variables; a
 * checker reads both and expects them to agree. Nothing orders the
 * checker's reads with the setter's writes: a data race, and when the
 * checker reads between the two writes it sees a torn pair. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static int version;
static int checksum;

static void *setter(void *arg) {
    (void)arg;
    for (int v = 1; v <= 2; v++) {
        version = v;
        checksum = v * 7;
    }
    return NULL;
}

static void *checker(void *arg) {
    (void)arg;
    int v = version;
    int c = checksum;
    if (c != v * 7) {
        printf("torn: version %d, checksum %d\n", v, c);
        assert(0 && "the checker saw a version with another version's checksum");
    }
    return NULL;
}

int main(void) {
    pthread_t set, check;
    pthread_create(&set, NULL, setter, NULL);
    pthread_create(&check, NULL, checker, NULL);
    pthread_join(set, NULL);
    pthread_join(check, NULL);
    return 0;
}
