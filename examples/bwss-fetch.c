/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bwss-fetch — an application that puts its own download under bwss through
 * libbwss's public API, without GStreamer: what a program with a download of
 * its own (an updater, a game's asset fetcher, a backup client) does.
 *
 *   bwss-fetch [--priority=P] [--min-rate=RATE] [--weight=W] [--output=FILE]
 *              [--stats-interval=MS] http://HOST[:PORT]/PATH
 *
 * It connects a plain TCP socket, registers it in the user's domain with its
 * preferences (bwss_flow_register), runs the domain from its GLib main loop
 * (bwss/bwss-glib.h), sends an HTTP/1.0 GET and reads the answer as it
 * comes, printing the flow's statistics (bwss_flow_get_stats) every
 * --stats-interval and once at the end, then unregisters the flow (its
 * window goes back to the kernel's) and closes the domain.  Only http:// URLs:
 * the point is the API, not HTTP; a real program uses its own HTTP stack and
 * registers the socket it gets from it the same way.
 *
 * Output, one line each: "registered: priority P weight W min-rate M bit/s",
 * "bwss-stats: ...", "end of download: N bytes".  Bad options or URL: a
 * message on stderr and exit 2, before anything is connected; a failed
 * download: exit 1.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <glib.h>
#include <glib-unix.h>
#include <bwss/bwss-glib.h>
#include <bwss/domain.h>

typedef struct {
  GMainLoop *loop;
  BwssFlow  *flow;
  int        fd;
  FILE      *out;            /* the body goes here; NULL: discarded */
  guint64    body_bytes;
  gboolean   in_body;        /* the header has been read */
  GString   *header;
  int        status;         /* the exit status */
} Fetch;

/* ---- the command line ---- */

typedef struct {
  BwssPrefs prefs;
  char     *output;
  guint     stats_ms;
  char     *host, *port, *path;
} Options;

/* Splits http://HOST[:PORT]/PATH; returns FALSE for anything else. */
static gboolean
parse_url (const char *url, Options *o)
{
  if (!g_str_has_prefix (url, "http://"))
    return FALSE;
  const char *hp = url + strlen ("http://"), *slash = strchr (hp, '/');
  g_autofree char *hostport = slash ? g_strndup (hp, (gsize) (slash - hp)) : g_strdup (hp);
  const char *colon = strrchr (hostport, ':');
  o->host = colon ? g_strndup (hostport, (gsize) (colon - hostport)) : g_strdup (hostport);
  o->port = g_strdup (colon ? colon + 1 : "80");
  o->path = g_strdup (slash ? slash : "/");
  return *o->host != '\0' && *o->port != '\0';
}

/* Reads the options and the URL into @o; on bad input prints why and
 * returns FALSE. */
static gboolean
parse_args (int argc, char **argv, Options *o)
{
  g_autofree char *priority = NULL, *min_rate = NULL, *weight = NULL;
  int stats_ms = 1000;
  GOptionEntry entries[] = {
    { "priority", 0, 0, G_OPTION_ARG_STRING, &priority, "served before lower priorities (default 0)", "P" },
    { "min-rate", 0, 0, G_OPTION_ARG_STRING, &min_rate, "the rate it needs, bit/s (k, M, G)", "RATE" },
    { "weight", 0, 0, G_OPTION_ARG_STRING, &weight, "its share of what is left (default 1)", "W" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o->output, "write the body here (default: discard)", "FILE" },
    { "stats-interval", 0, 0, G_OPTION_ARG_INT, &stats_ms, "statistics every MS ms (default 1000)", "MS" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("http://HOST[:PORT]/PATH");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_autoptr (GError) err = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    g_printerr ("bwss-fetch: %s\n", err->message);
    return FALSE;
  }
  o->prefs = (BwssPrefs) { .priority = 0, .min_rate_bps = 0.0, .weight = 1.0 };
  if (priority && bwss_parse_priority (priority, &o->prefs.priority) != 0) {
    g_printerr ("bwss-fetch: --priority=%s is not a priority (%d to %d)\n", priority,
                BWSS_PRIORITY_MIN, BWSS_PRIORITY_MAX);
    return FALSE;
  }
  if (min_rate && bwss_parse_rate (min_rate, &o->prefs.min_rate_bps) != 0) {
    g_printerr ("bwss-fetch: --min-rate=%s is not a rate (e.g. 500k, 2M)\n", min_rate);
    return FALSE;
  }
  if (weight && bwss_parse_weight (weight, &o->prefs.weight) != 0) {
    g_printerr ("bwss-fetch: --weight=%s is not a weight\n", weight);
    return FALSE;
  }
  if (stats_ms < 10) {
    g_printerr ("bwss-fetch: --stats-interval=%d: at least 10 ms\n", stats_ms);
    return FALSE;
  }
  o->stats_ms = (guint) stats_ms;
  if (argc != 2 || !parse_url (argv[1], o)) {
    g_printerr ("bwss-fetch: give one http://HOST[:PORT]/PATH URL\n");
    return FALSE;
  }
  return TRUE;
}

/* ---- the download ---- */

/* Returns a connected TCP socket to @o's host and port, or -1 (said why). */
static int
connect_to (const Options *o)
{
  struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
  int rc = getaddrinfo (o->host, o->port, &hints, &res);
  if (rc != 0) {
    g_printerr ("bwss-fetch: %s:%s: %s\n", o->host, o->port, gai_strerror (rc));
    return -1;
  }
  int fd = -1;
  for (ai = res; ai && fd < 0; ai = ai->ai_next) {
    fd = socket (ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd >= 0 && connect (fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      close (fd);
      fd = -1;
    }
  }
  freeaddrinfo (res);
  if (fd < 0)
    g_printerr ("bwss-fetch: cannot connect to %s:%s\n", o->host, o->port);
  return fd;
}

/* Prints the flow's statistics as libbwss reports them. */
static void
print_stats (Fetch *f)
{
  BwssFlowStats st;
  if (bwss_flow_get_stats (f->flow, &st) != 0)
    return;                              /* the domain is busy: the next time */
  g_autofree char *target = st.target_bps >= 0.0 ? g_strdup_printf ("%.0f", st.target_bps / 1e3)
                                                 : g_strdup ("-");
  g_print ("bwss-stats: %" G_GUINT64_FORMAT " B  rate %.0f kbit/s  target %s kbit/s  "
           "min %.0f kbit/s  window %u B  rtt %.1f ms  %s\n",
           st.bytes_received, st.rate_bps > 0.0 ? st.rate_bps / 1e3 : 0.0, target,
           st.prefs.min_rate_bps / 1e3, st.window_bytes, st.rtt_us / 1e3,
           st.controlled ? "controlled" : "registered");
}

static gboolean
on_stats (gpointer data)
{
  print_stats (data);
  return G_SOURCE_CONTINUE;
}

/* Takes @n bytes read: the header until its blank line (the status line
 * must say 200), then the body. */
static gboolean
take (Fetch *f, const char *buf, gsize n)
{
  if (!f->in_body) {
    g_string_append_len (f->header, buf, (gssize) n);
    const char *end = strstr (f->header->str, "\r\n\r\n");
    if (end == NULL)
      return f->header->len < 65536;     /* a header that never ends is an error */
    if (!g_str_has_prefix (f->header->str, "HTTP/1.") || strncmp (f->header->str + 8, " 200", 4) != 0) {
      g_printerr ("bwss-fetch: %.*s\n", (int) strcspn (f->header->str, "\r\n"), f->header->str);
      return FALSE;
    }
    f->in_body = TRUE;
    gsize head = (gsize) (end + 4 - f->header->str);
    buf = f->header->str + head;
    n = f->header->len - head;
  }
  f->body_bytes += n;
  return f->out == NULL || fwrite (buf, 1, n, f->out) == n;
}

static gboolean
on_readable (gint fd, GIOCondition cond, gpointer data)
{
  Fetch *f = data;
  char buf[65536];
  ssize_t got = read (fd, buf, sizeof buf);
  if (got < 0 && (errno == EINTR || errno == EAGAIN))
    return G_SOURCE_CONTINUE;
  if (got > 0 && take (f, buf, (gsize) got))
    return G_SOURCE_CONTINUE;
  (void) cond;
  if (got < 0)
    g_printerr ("bwss-fetch: read: %s\n", g_strerror (errno));
  f->status = got == 0 && f->in_body ? 0 : 1;
  g_main_loop_quit (f->loop);
  return G_SOURCE_REMOVE;
}

int
main (int argc, char **argv)
{
  Options o = { 0 };
  if (!parse_args (argc, argv, &o))
    return 2;
  Fetch f = { .loop = g_main_loop_new (NULL, FALSE), .header = g_string_new (NULL), .status = 1 };
  if (o.output && (f.out = fopen (o.output, "wb")) == NULL) {
    g_printerr ("bwss-fetch: %s: %s\n", o.output, g_strerror (errno));
    return 2;
  }
  if ((f.fd = connect_to (&o)) < 0)
    return 1;

  /* the user's domain ($BWSS_DOMAIN, else bwss-<uid>), run from this main loop */
  BwssDomain *domain;
  int err = bwss_domain_open (NULL, 0, &domain);
  if (err) {
    g_printerr ("bwss-fetch: the domain: %s\n", bwss_strerror (err));
    return 1;
  }
  guint dispatch = bwss_domain_attach (domain, NULL);
  err = bwss_flow_register (domain, f.fd, &o.prefs, &f.flow);
  if (err) {
    g_printerr ("bwss-fetch: register: %s\n", bwss_strerror (err));
    return 1;
  }
  g_print ("registered: priority %d weight %g min-rate %.0f bit/s\n", o.prefs.priority,
           o.prefs.weight, o.prefs.min_rate_bps);

  g_autofree char *req = g_strdup_printf ("GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: bwss-fetch\r\n\r\n",
                                          o.path, o.host);
  if (send (f.fd, req, strlen (req), MSG_NOSIGNAL) != (ssize_t) strlen (req)) {
    g_printerr ("bwss-fetch: send: %s\n", g_strerror (errno));
  } else {
    g_unix_fd_add (f.fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_readable, &f);
    guint stats = g_timeout_add (o.stats_ms, on_stats, &f);
    g_main_loop_run (f.loop);
    g_source_remove (stats);
    print_stats (&f);
    if (f.status == 0)
      g_print ("end of download: %" G_GUINT64_FORMAT " bytes\n", f.body_bytes);
  }

  bwss_flow_unregister (f.flow);         /* its window back to the kernel's */
  g_source_remove (dispatch);
  bwss_domain_close (domain);
  close (f.fd);
  if (f.out && fclose (f.out) != 0)
    f.status = 1;
  g_string_free (f.header, TRUE);
  g_main_loop_unref (f.loop);
  g_free (o.output);
  g_free (o.host);
  g_free (o.port);
  g_free (o.path);
  return f.status;
}
