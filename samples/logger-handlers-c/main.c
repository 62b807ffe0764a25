/*
 * A logger with handlers for `weft gen`, in the manner of logging
 * libraries: the logger has a level (set_level, level, is_loggable) and
 * keeps a list of handlers, each with a level (add_handler,
 * set_handler_level, handler_count); publish(level) drops a record below
 * the logger's level and writes it to every handler whose level it meets.
 * remove_handler(id) takes a handler off the list and closes it, since
 * nothing else refers to it; written(id) counts a handler's records.
 *
 * hlogger's publish copies the handler list under the logger's lock and
 * writes to the handlers after letting go of it, so that a slow handler
 * does not hold up other threads' logging. A remove_handler in between
 * closes a handler that the copy still holds, and the record is written to
 * a closed handler. chlogger writes to the handlers while it holds the
 * logger's lock, so a handler is closed only once no publish uses it.
 */
#include <pthread.h>
#include "weft.h"
#include "weft_class.h"

#define EXPORT(name) __attribute__((export_name(name)))
#define MAX_LOGGERS 16
#define MAX_HANDLERS 4

struct handler {
    pthread_mutex_t lock;
    int level;
    int open;
    int written;
};

struct logger {
    pthread_mutex_t lock;
    struct handler handlers[MAX_HANDLERS]; /* storage, by id */
    int list[MAX_HANDLERS];                /* ids of the handlers attached */
    int attached;
    int created;
    int level; /* records below it are dropped */
};

static struct logger loggers[MAX_LOGGERS];
static int logger_count;
static pthread_mutex_t registry = PTHREAD_MUTEX_INITIALIZER;

static struct logger *logger_at(int h) {
    pthread_mutex_lock(&registry);
    struct logger *l = h >= 0 && h < logger_count ? &loggers[h] : 0;
    pthread_mutex_unlock(&registry);
    return l;
}

static int logger_new(void) {
    pthread_mutex_lock(&registry);
    int h = logger_count < MAX_LOGGERS ? logger_count++ : -1;
    if (h >= 0) {
        pthread_mutex_init(&loggers[h].lock, 0);
        loggers[h].attached = loggers[h].created = loggers[h].level = 0;
    }
    pthread_mutex_unlock(&registry);
    return h;
}

/* Attaches a new handler for records of at least `level`; its id, or -1. */
static int add_handler(int h, int level) {
    struct logger *l = logger_at(h);
    if (!l) return -1;
    pthread_mutex_lock(&l->lock);
    int id = l->created < MAX_HANDLERS ? l->created++ : -1;
    if (id >= 0) {
        struct handler *handler = &l->handlers[id];
        pthread_mutex_init(&handler->lock, 0);
        handler->level = level;
        handler->open = 1;
        handler->written = 0;
        l->list[l->attached++] = id;
    }
    pthread_mutex_unlock(&l->lock);
    return id;
}

/* With the handler's lock free: writes one record to it. */
static void write_record(struct handler *handler) {
    pthread_mutex_lock(&handler->lock);
    weft_assert(handler->open, "a record was written to a closed handler");
    handler->written++;
    pthread_mutex_unlock(&handler->lock);
}

/* Writes a record of `level` to every handler it meets; how many. */
static int publish(int h, int level, int hold) {
    struct logger *l = logger_at(h);
    if (!l) return -1;
    int targets[MAX_HANDLERS];
    int n = 0;
    pthread_mutex_lock(&l->lock);
    for (int i = 0; i < l->attached && level >= l->level; i++) {
        struct handler *handler = &l->handlers[l->list[i]];
        if (level >= handler->level) targets[n++] = l->list[i];
    }
    if (!hold) pthread_mutex_unlock(&l->lock);
    for (int i = 0; i < n; i++) write_record(&l->handlers[targets[i]]);
    if (hold) pthread_mutex_unlock(&l->lock);
    return n;
}

/* Detaches and closes handler `id`; 1 if it was attached. */
static int remove_handler(int h, int id) {
    struct logger *l = logger_at(h);
    if (!l) return -1;
    pthread_mutex_lock(&l->lock);
    int found = 0;
    for (int i = 0; i < l->attached; i++) {
        if (l->list[i] == id) {
            l->list[i] = l->list[--l->attached];
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&l->lock);
    if (found) {
        struct handler *handler = &l->handlers[id];
        pthread_mutex_lock(&handler->lock);
        handler->open = 0;
        pthread_mutex_unlock(&handler->lock);
    }
    return found;
}

/* Records written to handler `id` so far. */
static int written(int h, int id) {
    struct logger *l = logger_at(h);
    if (!l) return -1;
    pthread_mutex_lock(&l->lock);
    int ok = id >= 0 && id < l->created;
    pthread_mutex_unlock(&l->lock);
    if (!ok) return -1;
    struct handler *handler = &l->handlers[id];
    pthread_mutex_lock(&handler->lock);
    int n = handler->written;
    pthread_mutex_unlock(&handler->lock);
    return n;
}

/* Sets the logger's level; the old one. */
static int set_level(int h, int level) {
    struct logger *l = logger_at(h);
    if (!l) return -1;
    pthread_mutex_lock(&l->lock);
    int old = l->level;
    l->level = level;
    pthread_mutex_unlock(&l->lock);
    return old;
}

/* The logger's level (`what` 0), whether a record of `level` passes it
 * (1), or how many handlers are attached (2). */
static int logger_query(int h, int what, int level) {
    struct logger *l = logger_at(h);
    if (!l) return -1;
    pthread_mutex_lock(&l->lock);
    int result = what == 0 ? l->level : what == 1 ? level >= l->level : l->attached;
    pthread_mutex_unlock(&l->lock);
    return result;
}

/* Sets the level of attached handler `id`; the old one, or -1. */
static int set_handler_level(int h, int id, int level) {
    struct logger *l = logger_at(h);
    if (!l) return -1;
    pthread_mutex_lock(&l->lock);
    int old = -1;
    for (int i = 0; i < l->attached; i++) {
        if (l->list[i] == id) {
            old = l->handlers[id].level;
            l->handlers[id].level = level;
        }
    }
    pthread_mutex_unlock(&l->lock);
    return old;
}

EXPORT("hlogger_new") int hlogger_new(void) { return logger_new(); }
EXPORT("hlogger_add_handler") int hlogger_add_handler(int h, int level) { return add_handler(h, level); }
EXPORT("hlogger_publish") int hlogger_publish(int h, int level) { return publish(h, level, 0); }
EXPORT("hlogger_remove_handler") int hlogger_remove_handler(int h, int id) { return remove_handler(h, id); }
EXPORT("hlogger_written") int hlogger_written(int h, int id) { return written(h, id); }
EXPORT("hlogger_set_level") int hlogger_set_level(int h, int level) { return set_level(h, level); }
EXPORT("hlogger_level") int hlogger_level(int h) { return logger_query(h, 0, 0); }
EXPORT("hlogger_is_loggable") int hlogger_is_loggable(int h, int level) { return logger_query(h, 1, level); }
EXPORT("hlogger_handler_count") int hlogger_handler_count(int h) { return logger_query(h, 2, 0); }
EXPORT("hlogger_set_handler_level") int hlogger_set_handler_level(int h, int id, int level) { return set_handler_level(h, id, level); }

EXPORT("chlogger_new") int chlogger_new(void) { return logger_new(); }
EXPORT("chlogger_add_handler") int chlogger_add_handler(int h, int level) { return add_handler(h, level); }
EXPORT("chlogger_publish") int chlogger_publish(int h, int level) { return publish(h, level, 1); }
EXPORT("chlogger_remove_handler") int chlogger_remove_handler(int h, int id) { return remove_handler(h, id); }
EXPORT("chlogger_written") int chlogger_written(int h, int id) { return written(h, id); }
EXPORT("chlogger_set_level") int chlogger_set_level(int h, int level) { return set_level(h, level); }
EXPORT("chlogger_level") int chlogger_level(int h) { return logger_query(h, 0, 0); }
EXPORT("chlogger_is_loggable") int chlogger_is_loggable(int h, int level) { return logger_query(h, 1, level); }
EXPORT("chlogger_handler_count") int chlogger_handler_count(int h) { return logger_query(h, 2, 0); }
EXPORT("chlogger_set_handler_level") int chlogger_set_handler_level(int h, int id, int level) { return set_handler_level(h, id, level); }

int main(int argc, char **argv) { return weft_class_serve(argc, argv); }
