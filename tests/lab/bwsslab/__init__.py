# SPDX-License-Identifier: LGPL-2.1-or-later
"""bwsslab — the network lab: an emulated access link with real servers, the
paper's experiments, and bwss compared with plain TCP, trickle and a
router-side strict-priority ideal.

Modules, one concern each:
  scenario   the typed description of an experiment and its overrides
  topology   namespaces, the delay stage, the bottleneck (tbf / ideal HTB)
  hosts      the second receiving machine behind the same link (hosts=2)
  clients    servers and the command line of every client in every mode
  timeline   one run of one mode: start, cross traffic, switches, stop
  analysis   per-second series, means, queueing delay, late packets, validity
  plots      the figures of a run and of a scenario
  report     comparison tables, medians over repeated runs, docs/results/modes.md
  matrix     the bottleneck matrix, its targets, docs/results/matrix.md
  cli        the bwss-lab command
"""
