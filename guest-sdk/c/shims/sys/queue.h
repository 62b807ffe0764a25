/*
 * <sys/queue.h> for weft's C and C++ builds: the BSD intrusive lists
 * (singly and doubly linked lists and tail queues), which glibc and the
 * BSDs ship and wasi-libc (musl) does not. Only macros: each expands to
 * the plain pointer operations a program would otherwise write itself.
 */
#ifndef WEFT_SYS_QUEUE_H
#define WEFT_SYS_QUEUE_H

#include <stddef.h>

/* Singly linked lists. */
#define SLIST_HEAD(name, type) \
    struct name { struct type *slh_first; }
#define SLIST_HEAD_INITIALIZER(head) { NULL }
#define SLIST_ENTRY(type) \
    struct { struct type *sle_next; }
#define SLIST_INIT(head) ((head)->slh_first = NULL)
#define SLIST_EMPTY(head) ((head)->slh_first == NULL)
#define SLIST_FIRST(head) ((head)->slh_first)
#define SLIST_NEXT(elm, field) ((elm)->field.sle_next)
#define SLIST_FOREACH(var, head, field) \
    for ((var) = SLIST_FIRST(head); (var) != NULL; (var) = SLIST_NEXT(var, field))
#define SLIST_FOREACH_SAFE(var, head, field, next_var) \
    for ((var) = SLIST_FIRST(head); \
         (var) != NULL && ((next_var) = SLIST_NEXT(var, field), 1); \
         (var) = (next_var))
#define SLIST_INSERT_HEAD(head, elm, field) do { \
    (elm)->field.sle_next = (head)->slh_first; \
    (head)->slh_first = (elm); \
} while (0)
#define SLIST_INSERT_AFTER(after, elm, field) do { \
    (elm)->field.sle_next = (after)->field.sle_next; \
    (after)->field.sle_next = (elm); \
} while (0)
#define SLIST_REMOVE_HEAD(head, field) \
    ((head)->slh_first = (head)->slh_first->field.sle_next)
#define SLIST_REMOVE_AFTER(elm, field) \
    ((elm)->field.sle_next = (elm)->field.sle_next->field.sle_next)
#define SLIST_REMOVE(head, elm, type, field) do { \
    if ((head)->slh_first == (elm)) { \
        SLIST_REMOVE_HEAD(head, field); \
    } else { \
        struct type *weft_before_ = (head)->slh_first; \
        while (weft_before_->field.sle_next != (elm)) \
            weft_before_ = weft_before_->field.sle_next; \
        SLIST_REMOVE_AFTER(weft_before_, field); \
    } \
} while (0)

/* Doubly linked lists: each entry knows the pointer that points to it. */
#define LIST_HEAD(name, type) \
    struct name { struct type *lh_first; }
#define LIST_HEAD_INITIALIZER(head) { NULL }
#define LIST_ENTRY(type) \
    struct { struct type *le_next; struct type **le_prev; }
#define LIST_INIT(head) ((head)->lh_first = NULL)
#define LIST_EMPTY(head) ((head)->lh_first == NULL)
#define LIST_FIRST(head) ((head)->lh_first)
#define LIST_NEXT(elm, field) ((elm)->field.le_next)
#define LIST_FOREACH(var, head, field) \
    for ((var) = LIST_FIRST(head); (var) != NULL; (var) = LIST_NEXT(var, field))
#define LIST_FOREACH_SAFE(var, head, field, next_var) \
    for ((var) = LIST_FIRST(head); \
         (var) != NULL && ((next_var) = LIST_NEXT(var, field), 1); \
         (var) = (next_var))
#define LIST_INSERT_HEAD(head, elm, field) do { \
    if (((elm)->field.le_next = (head)->lh_first) != NULL) \
        (head)->lh_first->field.le_prev = &(elm)->field.le_next; \
    (head)->lh_first = (elm); \
    (elm)->field.le_prev = &(head)->lh_first; \
} while (0)
#define LIST_INSERT_AFTER(after, elm, field) do { \
    if (((elm)->field.le_next = (after)->field.le_next) != NULL) \
        (after)->field.le_next->field.le_prev = &(elm)->field.le_next; \
    (after)->field.le_next = (elm); \
    (elm)->field.le_prev = &(after)->field.le_next; \
} while (0)
#define LIST_INSERT_BEFORE(before, elm, field) do { \
    (elm)->field.le_prev = (before)->field.le_prev; \
    (elm)->field.le_next = (before); \
    *(before)->field.le_prev = (elm); \
    (before)->field.le_prev = &(elm)->field.le_next; \
} while (0)
#define LIST_REMOVE(elm, field) do { \
    if ((elm)->field.le_next != NULL) \
        (elm)->field.le_next->field.le_prev = (elm)->field.le_prev; \
    *(elm)->field.le_prev = (elm)->field.le_next; \
} while (0)

/* Singly linked tail queues: the head also knows where the last link is. */
#define STAILQ_HEAD(name, type) \
    struct name { struct type *stqh_first; struct type **stqh_last; }
#define STAILQ_HEAD_INITIALIZER(head) { NULL, &(head).stqh_first }
#define STAILQ_ENTRY(type) \
    struct { struct type *stqe_next; }
#define STAILQ_INIT(head) do { \
    (head)->stqh_first = NULL; \
    (head)->stqh_last = &(head)->stqh_first; \
} while (0)
#define STAILQ_EMPTY(head) ((head)->stqh_first == NULL)
#define STAILQ_FIRST(head) ((head)->stqh_first)
#define STAILQ_NEXT(elm, field) ((elm)->field.stqe_next)
#define STAILQ_FOREACH(var, head, field) \
    for ((var) = STAILQ_FIRST(head); (var) != NULL; (var) = STAILQ_NEXT(var, field))
#define STAILQ_FOREACH_SAFE(var, head, field, next_var) \
    for ((var) = STAILQ_FIRST(head); \
         (var) != NULL && ((next_var) = STAILQ_NEXT(var, field), 1); \
         (var) = (next_var))
#define STAILQ_INSERT_HEAD(head, elm, field) do { \
    if (((elm)->field.stqe_next = (head)->stqh_first) == NULL) \
        (head)->stqh_last = &(elm)->field.stqe_next; \
    (head)->stqh_first = (elm); \
} while (0)
#define STAILQ_INSERT_TAIL(head, elm, field) do { \
    (elm)->field.stqe_next = NULL; \
    *(head)->stqh_last = (elm); \
    (head)->stqh_last = &(elm)->field.stqe_next; \
} while (0)
#define STAILQ_INSERT_AFTER(head, after, elm, field) do { \
    if (((elm)->field.stqe_next = (after)->field.stqe_next) == NULL) \
        (head)->stqh_last = &(elm)->field.stqe_next; \
    (after)->field.stqe_next = (elm); \
} while (0)
#define STAILQ_REMOVE_HEAD(head, field) do { \
    if (((head)->stqh_first = (head)->stqh_first->field.stqe_next) == NULL) \
        (head)->stqh_last = &(head)->stqh_first; \
} while (0)
#define STAILQ_REMOVE_AFTER(head, elm, field) do { \
    if (((elm)->field.stqe_next = (elm)->field.stqe_next->field.stqe_next) == NULL) \
        (head)->stqh_last = &(elm)->field.stqe_next; \
} while (0)
#define STAILQ_REMOVE(head, elm, type, field) do { \
    if ((head)->stqh_first == (elm)) { \
        STAILQ_REMOVE_HEAD(head, field); \
    } else { \
        struct type *weft_before_ = (head)->stqh_first; \
        while (weft_before_->field.stqe_next != (elm)) \
            weft_before_ = weft_before_->field.stqe_next; \
        STAILQ_REMOVE_AFTER(head, weft_before_, field); \
    } \
} while (0)
#define STAILQ_CONCAT(head1, head2) do { \
    if (!STAILQ_EMPTY(head2)) { \
        *(head1)->stqh_last = (head2)->stqh_first; \
        (head1)->stqh_last = (head2)->stqh_last; \
        STAILQ_INIT(head2); \
    } \
} while (0)

/*
 * Tail queues: doubly linked, with the last entry known. A head and an
 * entry have the same layout (a pointer forwards, then the address of the
 * pointer backwards), which is how TAILQ_LAST and TAILQ_PREV step back.
 */
#define TAILQ_HEAD(name, type) \
    struct name { struct type *tqh_first; struct type **tqh_last; }
#define TAILQ_HEAD_INITIALIZER(head) { NULL, &(head).tqh_first }
#define TAILQ_ENTRY(type) \
    struct { struct type *tqe_next; struct type **tqe_prev; }
#define TAILQ_INIT(head) do { \
    (head)->tqh_first = NULL; \
    (head)->tqh_last = &(head)->tqh_first; \
} while (0)
#define TAILQ_EMPTY(head) ((head)->tqh_first == NULL)
#define TAILQ_FIRST(head) ((head)->tqh_first)
#define TAILQ_NEXT(elm, field) ((elm)->field.tqe_next)
#define TAILQ_LAST(head, headname) \
    (*(((struct headname *)((head)->tqh_last))->tqh_last))
#define TAILQ_PREV(elm, headname, field) \
    (*(((struct headname *)((elm)->field.tqe_prev))->tqh_last))
#define TAILQ_FOREACH(var, head, field) \
    for ((var) = TAILQ_FIRST(head); (var) != NULL; (var) = TAILQ_NEXT(var, field))
#define TAILQ_FOREACH_SAFE(var, head, field, next_var) \
    for ((var) = TAILQ_FIRST(head); \
         (var) != NULL && ((next_var) = TAILQ_NEXT(var, field), 1); \
         (var) = (next_var))
#define TAILQ_FOREACH_REVERSE(var, head, headname, field) \
    for ((var) = TAILQ_LAST(head, headname); (var) != NULL; \
         (var) = TAILQ_PREV(var, headname, field))
#define TAILQ_INSERT_HEAD(head, elm, field) do { \
    if (((elm)->field.tqe_next = (head)->tqh_first) != NULL) \
        (head)->tqh_first->field.tqe_prev = &(elm)->field.tqe_next; \
    else \
        (head)->tqh_last = &(elm)->field.tqe_next; \
    (head)->tqh_first = (elm); \
    (elm)->field.tqe_prev = &(head)->tqh_first; \
} while (0)
#define TAILQ_INSERT_TAIL(head, elm, field) do { \
    (elm)->field.tqe_next = NULL; \
    (elm)->field.tqe_prev = (head)->tqh_last; \
    *(head)->tqh_last = (elm); \
    (head)->tqh_last = &(elm)->field.tqe_next; \
} while (0)
#define TAILQ_INSERT_AFTER(head, after, elm, field) do { \
    if (((elm)->field.tqe_next = (after)->field.tqe_next) != NULL) \
        (elm)->field.tqe_next->field.tqe_prev = &(elm)->field.tqe_next; \
    else \
        (head)->tqh_last = &(elm)->field.tqe_next; \
    (after)->field.tqe_next = (elm); \
    (elm)->field.tqe_prev = &(after)->field.tqe_next; \
} while (0)
#define TAILQ_INSERT_BEFORE(before, elm, field) do { \
    (elm)->field.tqe_prev = (before)->field.tqe_prev; \
    (elm)->field.tqe_next = (before); \
    *(before)->field.tqe_prev = (elm); \
    (before)->field.tqe_prev = &(elm)->field.tqe_next; \
} while (0)
#define TAILQ_REMOVE(head, elm, field) do { \
    if ((elm)->field.tqe_next != NULL) \
        (elm)->field.tqe_next->field.tqe_prev = (elm)->field.tqe_prev; \
    else \
        (head)->tqh_last = (elm)->field.tqe_prev; \
    *(elm)->field.tqe_prev = (elm)->field.tqe_next; \
} while (0)
#define TAILQ_CONCAT(head1, head2, field) do { \
    if (!TAILQ_EMPTY(head2)) { \
        *(head1)->tqh_last = (head2)->tqh_first; \
        (head2)->tqh_first->field.tqe_prev = (head1)->tqh_last; \
        (head1)->tqh_last = (head2)->tqh_last; \
        TAILQ_INIT(head2); \
    } \
} while (0)

#endif
