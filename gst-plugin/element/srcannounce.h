/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * srcannounce.h — what bwsshttpsrc tells the application and downstream of
 * a response, as souphttpsrc does: its headers (an element message and a
 * sticky event), internet radio's caps and tags, and its size (the
 * duration in bytes).
 */
#ifndef BWSS_SRC_ANNOUNCE_H
#define BWSS_SRC_ANNOUNCE_H

#include "gstbwsshttpsrc-private.h"

/* Posts the http-headers message (uri, http-status-code, request-headers,
 * response-headers, redirection-uri) and pushes it as a sticky custom
 * event.  A header that is not UTF-8 is left out (a hostile server gets no
 * field, no crash); a repeated one is an array of strings. */
void src_announce_headers (GstBwssHttpSrc *src, SoupMessage *msg);
/* Internet radio (iradio-mode): a server that interleaves metadata says so
 * with icy-metaint; like souphttpsrc the stream goes out as application/x-icy
 * with that interval, for icydemux to split, and the station's name, genre
 * and URL become tags. */
void src_announce_icy (GstBwssHttpSrc *src, SoupMessageHeaders *rh);
/* The size is known from a response: the byte duration follows it
 * (duration-changed when it changed). */
void src_announce_size (GstBwssHttpSrc *src, guint64 size);

#endif
