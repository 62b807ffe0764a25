#include "pool.h"

#include <pthread.h>
#include <stdlib.h>

struct task {
    task_fn fn;
    void *arg;
    struct task *next;
};

struct pool {
    pthread_mutex_t lock;
    pthread_cond_t work_ready; /* a task was queued, or shutdown began */
    pthread_cond_t idle;       /* the last pending task finished */
    struct task *head, *tail;
    size_t pending; /* queued or running */
    int shutting_down;
    size_t nworkers;
    pthread_t *workers;
};

static struct task *next_task(struct pool *pool) {
    while (pool->head == NULL && !pool->shutting_down)
        pthread_cond_wait(&pool->work_ready, &pool->lock);
    struct task *task = pool->head;
    if (task != NULL) {
        pool->head = task->next;
        if (pool->head == NULL)
            pool->tail = NULL;
    }
    return task;
}

static void *worker_main(void *arg) {
    struct pool *pool = arg;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        struct task *task = next_task(pool);
        if (task == NULL)
            break; /* shutting down and nothing queued */
        pthread_mutex_unlock(&pool->lock);
        task->fn(task->arg);
        free(task);
        pthread_mutex_lock(&pool->lock);
        if (--pool->pending == 0)
            pthread_cond_broadcast(&pool->idle);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

struct pool *pool_create(size_t workers) {
    struct pool *pool = calloc(1, sizeof *pool);
    if (pool == NULL)
        return NULL;
    pool->workers = calloc(workers, sizeof *pool->workers);
    if (pool->workers == NULL) {
        free(pool);
        return NULL;
    }
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->work_ready, NULL);
    pthread_cond_init(&pool->idle, NULL);
    for (size_t i = 0; i < workers; i++) {
        if (pthread_create(&pool->workers[i], NULL, worker_main, pool) != 0) {
            pool->nworkers = i;
            pool_destroy(pool);
            return NULL;
        }
        pool->nworkers = i + 1;
    }
    return pool;
}

int pool_submit(struct pool *pool, task_fn fn, void *arg) {
    struct task *task = malloc(sizeof *task);
    if (task == NULL)
        return -1;
    task->fn = fn;
    task->arg = arg;
    task->next = NULL;
    pthread_mutex_lock(&pool->lock);
    if (pool->shutting_down) {
        pthread_mutex_unlock(&pool->lock);
        free(task);
        return -1;
    }
    if (pool->tail != NULL)
        pool->tail->next = task;
    else
        pool->head = task;
    pool->tail = task;
    pool->pending++;
    pthread_cond_signal(&pool->work_ready);
    pthread_mutex_unlock(&pool->lock);
    return 0;
}

void pool_wait(struct pool *pool) {
    pthread_mutex_lock(&pool->lock);
    while (pool->pending != 0)
        pthread_cond_wait(&pool->idle, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}

void pool_destroy(struct pool *pool) {
    pthread_mutex_lock(&pool->lock);
    pool->shutting_down = 1;
    pthread_cond_broadcast(&pool->work_ready);
    pthread_mutex_unlock(&pool->lock);
    for (size_t i = 0; i < pool->nworkers; i++)
        pthread_join(pool->workers[i], NULL);
    pthread_cond_destroy(&pool->idle);
    pthread_cond_destroy(&pool->work_ready);
    pthread_mutex_destroy(&pool->lock);
    free(pool->workers);
    free(pool);
}
