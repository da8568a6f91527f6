/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * driver.c — a deterministic mutation fuzzer for the targets in this
 * directory, built with gcc (no clang or libFuzzer needed; a target is a
 * LLVMFuzzerTestOneInput() function, so the same file also links with
 * libFuzzer: clang -fsanitize=fuzzer,address fuzz-units.c ...).
 *
 *   fuzz-TARGET [--runs N] [--seconds S] [--seed N] [--max-len N] CORPUS...
 *
 * Every file of the CORPUS directories (sorted by name) runs first, as is;
 * then inputs made from them by random mutations (bit flips, interesting
 * bytes, insertions, deletions, repeats, splices of two seeds, dictionary
 * words) run until N inputs or S seconds, whichever comes first.  The
 * sequence of inputs depends on the seed and the corpus only, so a failure
 * is replayed by running the same command again (and a file given instead
 * of a directory runs alone).  A target fails by aborting (assert,
 * g_assert, a sanitizer report) or by taking more than HANG_S seconds for
 * one input; the driver then writes the input to fuzz-crash-TARGET-SEED-RUN
 * in the current directory and prints its name and hex dump.
 *
 * A target may define fuzz_dictionary (NULL-terminated strings inserted by
 * one of the mutations).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
extern const char *const fuzz_dictionary[] __attribute__ ((weak));
extern const char fuzz_target_name[];

/* One input running longer than this is a hang. */
#define HANG_S 2

typedef struct {
  uint8_t *data;
  size_t   len;
} Input;

static Input *seeds;
static size_t n_seeds;
static size_t max_len = 4096;

/* What runs now, for the crash handler (async-signal-safe use only). */
static const uint8_t *current;
static size_t current_len;
static unsigned long long current_run;
static unsigned long long seed = 1;

/* ---- a small deterministic generator (splitmix64) ---- */

static uint64_t rng_state;

static uint64_t
rng (void)
{
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Returns a number in [0, n). */
static size_t
below (size_t n)
{
  return n ? (size_t) (rng () % n) : 0;
}

/* ---- failures ---- */

static void
write_all (int fd, const void *p, size_t n)
{
  const char *c = p;
  while (n > 0) {
    ssize_t w = write (fd, c, n);
    if (w <= 0)
      return;
    c += w;
    n -= (size_t) w;
  }
}

static void
put_str (const char *s)
{
  write_all (2, s, strlen (s));
}

static void
put_num (unsigned long long v)
{
  char buf[24];
  int i = (int) sizeof buf;
  do
    buf[--i] = (char) ('0' + v % 10);
  while ((v /= 10) && i > 0);
  write_all (2, buf + i, sizeof buf - (size_t) i);
}

/* Saves the input that runs now and describes it; async-signal-safe. */
static void
report_current (const char *why)
{
  char name[160] = "fuzz-crash-";
  strncat (name, fuzz_target_name, 64);
  char num[48];
  int i = (int) sizeof num - 1;
  num[i] = '\0';
  unsigned long long v = current_run;
  do
    num[--i] = (char) ('0' + v % 10);
  while ((v /= 10) && i > 0);
  num[--i] = '-';
  v = seed;
  do
    num[--i] = (char) ('0' + v % 10);
  while ((v /= 10) && i > 1);
  num[--i] = '-';
  strncat (name, num + i, sizeof name - strlen (name) - 1);
  put_str ("\nfuzz: ");
  put_str (why);
  put_str (" on input ");
  put_num (current_run);
  put_str (" (seed ");
  put_num (seed);
  put_str ("), saved as ");
  put_str (name);
  put_str ("\nfuzz: input (");
  put_num (current_len);
  put_str (" bytes):");
  static const char hex[] = "0123456789abcdef";
  for (size_t k = 0; k < current_len && k < 512; k++) {
    char b[3] = { ' ', hex[current[k] >> 4], hex[current[k] & 15] };
    write_all (2, b, 3);
  }
  put_str ("\n");
  int fd = open (name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    write_all (fd, current, current_len);
    close (fd);
  }
}

static void
on_fatal (int sig)
{
  report_current (sig == SIGALRM ? "hang (more than 2 s)" : "crash");
  signal (sig == SIGALRM ? SIGABRT : sig, SIG_DFL);
  raise (sig == SIGALRM ? SIGABRT : sig);
}

/* AddressSanitizer and UBSan call this before they exit. */
void __sanitizer_set_death_callback (void (*cb) (void)) __attribute__ ((weak));

static void
on_sanitizer_death (void)
{
  report_current ("sanitizer report");
}

/* ---- the corpus ---- */

static void
add_seed (const uint8_t *data, size_t len)
{
  seeds = realloc (seeds, (n_seeds + 1) * sizeof *seeds);
  seeds[n_seeds].data = malloc (len ? len : 1);
  memcpy (seeds[n_seeds].data, data, len);
  seeds[n_seeds].len = len;
  n_seeds++;
}

static int
load_file (const char *path)
{
  FILE *f = fopen (path, "rb");
  if (f == NULL) {
    fprintf (stderr, "fuzz: %s: %s\n", path, strerror (errno));
    return -1;
  }
  uint8_t *buf = malloc (max_len);
  size_t n = fread (buf, 1, max_len, f);
  fclose (f);
  add_seed (buf, n);
  free (buf);
  return 0;
}

static int
by_name (const struct dirent **a, const struct dirent **b)
{
  return strcmp ((*a)->d_name, (*b)->d_name);
}

static int
load (const char *path)
{
  struct stat st;
  if (stat (path, &st) != 0) {
    fprintf (stderr, "fuzz: %s: %s\n", path, strerror (errno));
    return -1;
  }
  if (!S_ISDIR (st.st_mode))
    return load_file (path);
  struct dirent **list;
  int n = scandir (path, &list, NULL, by_name);
  if (n < 0)
    return -1;
  int err = 0;
  for (int i = 0; i < n; i++) {
    if (list[i]->d_name[0] != '.') {
      char full[4096];
      snprintf (full, sizeof full, "%s/%s", path, list[i]->d_name);
      err |= load_file (full);
    }
    free (list[i]);
  }
  free (list);
  return err;
}

/* ---- mutations ---- */

static const uint8_t interesting[] = {
  0, 1, 0x7f, 0x80, 0xff, '0', '1', '9', '.', '-', '+', ' ', '\t', '\n', '\r', '#', 'e', 'E',
  'x', 'k', 'M', 'G', 'b', '/', 'i', 'n', 'f', 'a',
};

/* Mutates @in (of @len bytes, capacity max_len) once; returns the new length. */
static size_t
mutate (uint8_t *in, size_t len)
{
  switch (below (fuzz_dictionary ? 8 : 7)) {
    case 0:                                                   /* flip a bit */
      if (len)
        in[below (len)] ^= (uint8_t) (1u << below (8));
      break;
    case 1:                                                   /* an interesting byte */
      if (len)
        in[below (len)] = interesting[below (sizeof interesting)];
      break;
    case 2:                                                   /* insert one */
      if (len < max_len) {
        size_t at = below (len + 1);
        memmove (in + at + 1, in + at, len - at);
        in[at] = rng () & 1 ? interesting[below (sizeof interesting)] : (uint8_t) rng ();
        len++;
      }
      break;
    case 3: {                                                 /* delete some */
      if (len) {
        size_t at = below (len), n = 1 + below (len - at < 8 ? len - at : 8);
        memmove (in + at, in + at + n, len - at - n);
        len -= n;
      }
      break;
    }
    case 4: {                                                 /* repeat a chunk */
      if (len) {
        size_t from = below (len), n = 1 + below (len - from < 64 ? len - from : 64);
        size_t at = below (len + 1);
        if (len + n <= max_len) {
          uint8_t chunk[64];
          memcpy (chunk, in + from, n);
          memmove (in + at + n, in + at, len - at);
          memcpy (in + at, chunk, n);
          len += n;
        }
      }
      break;
    }
    case 5: {                                                 /* splice another seed */
      const Input *o = &seeds[below (n_seeds)];
      if (o->len) {
        size_t from = below (o->len), n = 1 + below (o->len - from);
        size_t at = below (len + 1);
        if (at + n > max_len)
          n = max_len - at;
        memcpy (in + at, o->data + from, n);
        if (at + n > len)
          len = at + n;
      }
      break;
    }
    case 6:                                                   /* a random byte */
      if (len)
        in[below (len)] = (uint8_t) rng ();
      break;
    default: {                                                /* a dictionary word */
      size_t words = 0;
      while (fuzz_dictionary[words])
        words++;
      const char *w = fuzz_dictionary[below (words)];
      size_t n = strlen (w), at = below (len + 1);
      if (len + n <= max_len) {
        memmove (in + at + n, in + at, len - at);
        memcpy (in + at, w, n);
        len += n;
      }
      break;
    }
  }
  return len;
}

/* ---- main ---- */

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
run_one (const uint8_t *data, size_t len)
{
  /* a copy of exactly @len bytes, so reading past the end is caught */
  uint8_t *copy = malloc (len ? len : 1);
  memcpy (copy, data, len);
  current = copy;
  current_len = len;
  alarm (HANG_S);
  LLVMFuzzerTestOneInput (copy, len);
  alarm (0);
  free (copy);
  current_run++;
}

int
main (int argc, char **argv)
{
  unsigned long long runs = 10000;
  double seconds = 30;
  int first = 1;
  for (; first < argc && strncmp (argv[first], "--", 2) == 0; first += 2) {
    if (first + 1 >= argc)
      goto usage;
    char *end;
    unsigned long long v = strtoull (argv[first + 1], &end, 10);
    if (*end)
      goto usage;
    if (strcmp (argv[first], "--runs") == 0)
      runs = v;
    else if (strcmp (argv[first], "--seconds") == 0)
      seconds = (double) v;
    else if (strcmp (argv[first], "--seed") == 0)
      seed = v;
    else if (strcmp (argv[first], "--max-len") == 0 && v > 0)
      max_len = v;
    else
      goto usage;
  }
  if (first >= argc)
    goto usage;
  for (int i = first; i < argc; i++)
    if (load (argv[i]) != 0)
      return 2;
  if (n_seeds == 0)
    add_seed ((const uint8_t *) "", 0);

  signal (SIGSEGV, on_fatal);
  signal (SIGBUS, on_fatal);
  signal (SIGFPE, on_fatal);
  signal (SIGILL, on_fatal);
  signal (SIGABRT, on_fatal);
  signal (SIGALRM, on_fatal);
  if (__sanitizer_set_death_callback)
    __sanitizer_set_death_callback (on_sanitizer_death);

  rng_state = seed;
  double start = now_s ();
  for (size_t i = 0; i < n_seeds; i++)
    run_one (seeds[i].data, seeds[i].len);
  uint8_t *buf = malloc (max_len);
  while (current_run < runs && now_s () - start < seconds) {
    const Input *s = &seeds[below (n_seeds)];
    size_t len = s->len < max_len ? s->len : max_len;
    memcpy (buf, s->data, len);
    for (size_t k = 1 + below (4); k > 0; k--)
      len = mutate (buf, len);
    run_one (buf, len);
  }
  free (buf);
  printf ("fuzz %s: %llu inputs (%zu seeds, seed %llu) in %.1f s, no failure\n", fuzz_target_name,
          current_run, n_seeds, seed, now_s () - start);
  return 0;

usage:
  fprintf (stderr, "usage: fuzz-%s [--runs N] [--seconds S] [--seed N] [--max-len N] CORPUS...\n",
           fuzz_target_name);
  return 2;
}
