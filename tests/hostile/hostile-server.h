/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hostile-server.h — a tiny HTTP/1.1 server on raw sockets that misbehaves
 * on purpose, one behaviour per path (see hostile-server.c for the list).
 * Raw sockets because a real HTTP library refuses to write broken framing.
 *
 * It serves one body, HOSTILE_BODY_SIZE bytes of a fixed pseudo-random
 * pattern (hostile_body()), and a second pattern for "the resource changed"
 * cases.  Every connection runs in its own thread; every request is counted
 * per path so a test can check how often the client came back.
 */
#ifndef HOSTILE_SERVER_H
#define HOSTILE_SERVER_H

#include <gio/gio.h>

#define HOSTILE_BODY_SIZE 99500

typedef struct HostileServer HostileServer;

/* Starts listening on 127.0.0.1 (a free port); NULL with @error on failure. */
HostileServer *hostile_server_start (GError **error);
/* Closes every connection, joins every thread, frees. */
void           hostile_server_stop (HostileServer *s);
/* "http://127.0.0.1:PORT" */
const char    *hostile_server_url (HostileServer *s);
/* Requests seen on @path (the query string excluded) since the start. */
guint          hostile_server_requests (HostileServer *s, const char *path);
/* The body every honest answer serves. */
const guint8  *hostile_body (void);

#endif
