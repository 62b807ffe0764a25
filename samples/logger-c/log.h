/* A logger whose callers only queue records: a background thread writes
 * them out, in the order they were queued. */
#ifndef LOG_H
#define LOG_H

#include <stddef.h>

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* Where written records go: called by the background thread only. */
typedef void (*log_sink)(const char *line, void *context);

/* Starts the background thread; 0 on success. */
int log_start(log_sink sink, void *context);

/* Records below `level` are dropped (may be called at any time). */
void log_set_level(enum log_level level);

/* Queues a record (formatted as printf does) unless its level is below
 * the logger's. */
void log_write(enum log_level level, const char *format, ...);

/* Writes out every queued record, stops the background thread and
 * returns how many records it wrote in all. */
size_t log_stop(void);

#endif
