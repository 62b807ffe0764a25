/* Reference solution: the readers read both sides under one read lock,
 * which readers can hold together but not while the writer holds the
 * write lock; the writer changes both sides under the write lock. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct {
    int width;
    int height;
} shape = {1, 1};

/* Makes the shape a square of side `side`. */
static void resize(int side) {
    pthread_rwlock_wrlock(&lock);
    shape.width = side;
    shape.height = side;
    pthread_rwlock_unlock(&lock);
}

/* Returns width - height as the readers see it. */
static int look(void) {
    pthread_rwlock_rdlock(&lock);
    int width = shape.width;
    int height = shape.height;
    pthread_rwlock_unlock(&lock);
    return width - height;
}

static void *writer(void *arg) {
    (void)arg;
    resize(2);
    resize(3);
    return NULL;
}

static void *reader(void *arg) {
    (void)arg;
    for (int i = 0; i < 2; i++)
        assert(look() == 0 && "a reader saw a shape that is not a square");
    return NULL;
}

int main(void) {
    pthread_t w, r[2];
    pthread_create(&w, NULL, writer, NULL);
    for (int i = 0; i < 2; i++)
        pthread_create(&r[i], NULL, reader, NULL);
    pthread_join(w, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(r[i], NULL);
    printf("the shape is %d by %d\n", shape.width, shape.height);
    return 0;
}
