/* The montecarlo bot's search in C: the same deals, playouts and successive halving as
 * bot.py's Python search, 50 or so times faster. bot.py loads it with ctypes when the
 * build has made libsearch.so, and searches in Python otherwise.
 *
 * Given the same generator (splitmix64, below) the two give the same answers, deal for
 * deal: tests/unit/test_montecarlo_native.py runs both. So the Python code is the
 * reference for what everything here means; this file only says how it is laid out.
 *
 * Every array comes from bot.py, sized by the rules (at most 104 cards, 10 seats); the
 * entry points check the sizes they are given and return -1 for any out of bounds. */

#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <string.h>
#include <time.h>

#define ROWS 4
#define FULL 5
#define MAX_CARD 104
#define MAX_SEATS 10
#define MAX_HAND 104
#define LOW_PENALTY 0.5

/* --- the generator: splitmix64, a double in [0, 1) from its top 53 bits --- */

static inline uint64_t next64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline double rnd(uint64_t *s) { return (double)(next64(s) >> 11) * (1.0 / 9007199254740992.0); }

/* Python's random.shuffle, with rnd() for its draws. */
static void shuffle(int *x, int n, uint64_t *s) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rnd(s) * (i + 1));
        int t = x[i];
        x[i] = x[j];
        x[j] = t;
    }
}

static void sort_ints(int *x, int n) {
    for (int i = 1; i < n; i++) {
        int v = x[i], j = i - 1;
        while (j >= 0 && x[j] > v) {
            x[j + 1] = x[j];
            j--;
        }
        x[j + 1] = v;
    }
}

/* --- rows: sorted by their ends, with counts and heads; in the professional variant
 * in table order, with their first cards too (bot.py's table_rows) --- */

typedef struct {
    int ends[ROWS], cnts[ROWS], hds[ROWS], first[ROWS];
} Rows;

typedef struct {
    const int *heads;   /* heads per card, [MAX_CARD + 1] */
    const double *fill; /* fill_costs: [gap * FULL + n] */
    int pro;            /* the professional rule: a card at either end of a row */
} Tables;

static inline int bisect_left(const int *a, int n, int x) {
    int lo = 0;
    while (lo < n && a[lo] < x) lo++;
    return lo;
}

static inline int cheapest(const Rows *r) {
    int best = 0;
    for (int i = 1; i < ROWS; i++)
        if (r->hds[i] < r->hds[best]) best = i;
    return best;
}

/* bot.py's greedy_card: the card of hand (ascending) with the least card_cost. */
static int greedy_card(const Rows *r, const int *hand, int size, const Tables *t) {
    int best = hand[0];
    double best_cost = best < r->ends[0] ? r->hds[cheapest(r)] + LOW_PENALTY : 1e9;
    for (int i = 0; i < ROWS; i++) {
        int end = r->ends[i];
        int j = bisect_left(hand, size, end);
        if (j == size) break;
        int c = hand[j];
        if (i < ROWS - 1 && c > r->ends[i + 1]) continue;
        int n = r->cnts[i];
        double cost;
        if (n == FULL) {
            cost = r->hds[i] + 0.001 * c;
        } else {
            int gap = c - end;
            cost = t->fill[gap * FULL + n] * (r->hds[i] + FULL - n) + 0.0001 * gap;
        }
        if (cost < best_cost) {
            best_cost = cost;
            best = c;
        }
    }
    return best;
}

/* bot.py's pro_spot: the row whose closest end takes x (*left: its left end), an exact
 * tie going to the right end, then to the lower row; -1 inside every row. */
static int pro_spot(const Rows *r, int x, int *left) {
    int best = -1, bd = 0, bl = 0;
    for (int i = 0; i < ROWS; i++) {
        if (r->ends[i] < x) {
            int d = x - r->ends[i];
            if (best < 0 || d < bd || (d == bd && bl > 0)) {
                best = i;
                bd = d;
                bl = 0;
            }
        }
        if (x < r->first[i]) {
            int d = r->first[i] - x;
            if (best < 0 || d < bd) {
                best = i;
                bd = d;
                bl = 1;
            }
        }
    }
    *left = bl;
    return best;
}

/* bot.py's pro_cost and greedy_pro: every card weighed. */
static double pro_cost(const Rows *r, int c, const Tables *t) {
    int left;
    int i = pro_spot(r, c, &left);
    if (i < 0) return r->hds[cheapest(r)] + LOW_PENALTY;
    int n = r->cnts[i];
    if (n == FULL) return r->hds[i] + 0.001 * c;
    int gap = left ? r->first[i] - c : c - r->ends[i];
    return t->fill[gap * FULL + n] * (r->hds[i] + FULL - n) + 0.0001 * gap;
}

static int greedy_pro(const Rows *r, const int *hand, int size, const Tables *t) {
    int best = hand[0];
    double best_cost = pro_cost(r, best, t);
    for (int k = 1; k < size; k++) {
        double cost = pro_cost(r, hand[k], t);
        if (cost < best_cost) {
            best_cost = cost;
            best = hand[k];
        }
    }
    return best;
}

static inline int pick(const Rows *r, const int *hand, int size, const Tables *t) {
    return t->pro ? greedy_pro(r, hand, size, t) : greedy_card(r, hand, size, t);
}

static inline void remove_card(int *hand, int *size, int card) {
    int i = 0;
    while (hand[i] != card) i++;
    memmove(hand + i, hand + i + 1, (size_t)(*size - i - 1) * sizeof(int));
    (*size)--;
}

/* --- a deal: the hidden cards as they might lie --- */

typedef struct {
    int ghand[MAX_SEATS][MAX_HAND]; /* each greedy opponent's hand, ascending */
    int glen[MAX_SEATS];
} Greedy;

/* Copy the first n hands of a Greedy (each only as long as it is). */
static void copy_greedy(Greedy *to, const Greedy *from, int n) {
    for (int o = 0; o < n; o++) {
        memcpy(to->ghand[o], from->ghand[o], (size_t)from->glen[o] * sizeof(int));
        to->glen[o] = from->glen[o];
    }
}

typedef struct {
    int nseq;                          /* random opponents */
    int seq[MAX_SEATS][MAX_HAND];      /* each one's cards in the order it plays them */
    int seqlen[MAX_SEATS];
    int ngreedy;                       /* greedy opponents */
    Greedy g;                          /* their hands */
    unsigned char gflag[MAX_CARD + 1]; /* the greedy opponents' cards */
    unsigned char owner[MAX_CARD + 1]; /* each dealt card's opponent, 1 for the first */
} Deal;

typedef struct {
    int nopp;
    const int *pool; /* the unseen cards (known == NULL) */
    int npool;
    const int *sizes;      /* their hand sizes */
    const int *known;      /* logical: every opponent's hand, one after another */
    const double *greedy;  /* the chance each plays greedily */
} Dealer;

/* bot.py's Deals.deal. */
static void deal(const Dealer *d, Deal *out, uint64_t *s) {
    int hands[MAX_SEATS][MAX_HAND];
    int lens[MAX_SEATS];
    if (d->known) {
        int at = 0;
        for (int o = 0; o < d->nopp; o++) {
            lens[o] = d->sizes[o];
            memcpy(hands[o], d->known + at, (size_t)lens[o] * sizeof(int));
            at += lens[o];
            shuffle(hands[o], lens[o], s);
        }
    } else {
        int cards[MAX_CARD];
        memcpy(cards, d->pool, (size_t)d->npool * sizeof(int));
        shuffle(cards, d->npool, s);
        int at = 0;
        for (int o = 0; o < d->nopp; o++) {
            lens[o] = d->sizes[o];
            memcpy(hands[o], cards + at, (size_t)lens[o] * sizeof(int));
            at += lens[o];
        }
    }
    memset(out->gflag, 0, sizeof out->gflag);
    out->nseq = out->ngreedy = 0;
    for (int o = 0; o < d->nopp; o++) {
        for (int k = 0; k < lens[o]; k++) out->owner[hands[o][k]] = (unsigned char)(o + 1);
        double chance = d->greedy[o];
        if (chance != 0.0 && rnd(s) < chance) {
            int g = out->ngreedy++;
            memcpy(out->g.ghand[g], hands[o], (size_t)lens[o] * sizeof(int));
            sort_ints(out->g.ghand[g], lens[o]);
            out->g.glen[g] = lens[o];
            for (int k = 0; k < lens[o]; k++) out->gflag[hands[o][k]] = 1;
        } else {
            int q = out->nseq++;
            memcpy(out->seq[q], hands[o], (size_t)lens[o] * sizeof(int));
            out->seqlen[q] = lens[o];
        }
    }
}

/* --- a playout: bot.py's playout --- */

/* Our heads from the rest of the round. first (0: none) is our card this turn, played
 * with the opponents' cards now[0..nnow); t0 the deal's turn this playout starts at.
 * heads (NULL: not counted) gets every seat's heads, ours first. */
static int playout(Rows *r, int first, int *hand, int hsize, const int *now, int nnow, const Deal *d,
                   Greedy *g, int turns, int greedy, const Tables *t, uint64_t *s, int *heads) {
    int taken = 0;
    int turn[MAX_SEATS + 1];
    for (int k = 0;; k++) {
        int mine, n = 0;
        if (k == 0 && first) {
            mine = first;
            memcpy(turn, now, (size_t)nnow * sizeof(int));
            n = nnow;
            turn[n++] = mine;
        } else {
            if (hsize == 0) break;
            if (hsize == 1) {
                mine = hand[--hsize];
            } else if (greedy) {
                mine = pick(r, hand, hsize, t);
                remove_card(hand, &hsize, mine);
            } else {
                int i = (int)(rnd(s) * hsize);
                mine = hand[i];
                memmove(hand + i, hand + i + 1, (size_t)(hsize - i - 1) * sizeof(int));
                hsize--;
            }
            if (k < turns)
                for (int q = 0; q < d->nseq; q++)
                    if (k < d->seqlen[q]) turn[n++] = d->seq[q][k];
            turn[n++] = mine;
            for (int o = 0; o < d->ngreedy; o++) {
                if (g->glen[o]) {
                    int card = g->glen[o] > 1 ? pick(r, g->ghand[o], g->glen[o], t) : g->ghand[o][0];
                    remove_card(g->ghand[o], &g->glen[o], card);
                    turn[n++] = card;
                }
            }
        }
        sort_ints(turn, n);
        for (int m = 0; m < n; m++) {
            int x = turn[m];
            if (t->pro) { /* bot.py's playout_pro */
                int left, got, row = pro_spot(r, x, &left);
                if (row < 0) {
                    row = x == mine || d->gflag[x] ? cheapest(r) : (int)(rnd(s) * 4);
                } else if (r->cnts[row] < FULL) {
                    r->cnts[row]++;
                    r->hds[row] += t->heads[x];
                    if (left) r->first[row] = x;
                    else r->ends[row] = x;
                    continue;
                }
                got = r->hds[row];
                if (x == mine) taken += got;
                if (heads) heads[x == mine ? 0 : d->owner[x]] += got;
                r->first[row] = r->ends[row] = x;
                r->cnts[row] = 1;
                r->hds[row] = t->heads[x];
                continue;
            }
            int i = bisect_left(r->ends, ROWS, x);
            if (i == 0) {
                int row;
                if (x == mine) {
                    row = cheapest(r);
                    taken += r->hds[row];
                } else if (d->gflag[x]) {
                    row = cheapest(r);
                } else {
                    row = (int)(rnd(s) * 4);
                }
                if (heads) heads[x == mine ? 0 : d->owner[x]] += r->hds[row];
                for (int j = row; j > 0; j--) {
                    r->ends[j] = r->ends[j - 1];
                    r->cnts[j] = r->cnts[j - 1];
                    r->hds[j] = r->hds[j - 1];
                }
                r->ends[0] = x;
                r->cnts[0] = 1;
                r->hds[0] = t->heads[x];
            } else {
                i--;
                if (r->cnts[i] == FULL) {
                    if (x == mine) taken += r->hds[i];
                    if (heads) heads[x == mine ? 0 : d->owner[x]] += r->hds[i];
                    r->cnts[i] = 1;
                    r->hds[i] = t->heads[x];
                } else {
                    r->cnts[i]++;
                    r->hds[i] += t->heads[x];
                }
                r->ends[i] = x;
            }
        }
    }
    return taken;
}

/* bot.py's standing: our heads less the opponents' weighted by weights[k - 1] (NULL: none)
 * over their number, plus rank_heads for each opponent ending below us if the game ends. */
static double standing(const int *base, const int *heads, int seats, int taken, int end, double rank_heads,
                       const double *weights) {
    int ours = base[0] + heads[0], top = ours;
    double above = 0.0, theirs = 0.0;
    for (int k = 1; k < seats; k++) {
        int f = base[k] + heads[k];
        if (weights) theirs += weights[k - 1] * heads[k];
        if (f > top) top = f;
        if (f < ours) above += 1.0;
        else if (f == ours) above += 0.5;
    }
    double cost = taken - theirs / (seats - 1);
    if (top < end) return cost;
    return cost + rank_heads * above;
}

/* --- the clock: real, or (tick > 0) one that moves on tick seconds a reading --- */

typedef struct {
    double tick, virtual_now, start;
} Clock;

static double now_seconds(Clock *c) {
    if (c->tick > 0) return c->virtual_now += c->tick;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int bad_dealer(const Dealer *d, int turns) {
    if (d->nopp < 1 || d->nopp >= MAX_SEATS || turns < 0 || turns > MAX_HAND) return 1;
    if (!d->known && (d->npool < 0 || d->npool > MAX_CARD)) return 1;
    int total = 0;
    for (int o = 0; o < d->nopp; o++) {
        if (d->sizes[o] < 0 || d->sizes[o] > MAX_HAND) return 1;
        total += d->sizes[o];
    }
    if (!d->known && total > d->npool) return 1;
    const int *cards = d->known ? d->known : d->pool;
    int n = d->known ? total : d->npool;
    for (int k = 0; k < n; k++)
        if (cards[k] < 1 || cards[k] > MAX_CARD) return 1;
    return 0;
}

/* Rows out of bounds: standard ones must be sorted by their ends; professional ones
 * (firsts given) must start no later than they end. */
static int bad_rows(const int *ends, const int *cnts, const int *hds, const int *firsts) {
    for (int i = 0; i < ROWS; i++) {
        if (ends[i] < 1 || ends[i] > MAX_CARD || cnts[i] < 1 || cnts[i] > FULL || hds[i] < 0) return 1;
        if (firsts ? firsts[i] < 1 || firsts[i] > ends[i] : i && ends[i] <= ends[i - 1]) return 1;
    }
    return 0;
}

static void load_rows(Rows *r, const int *ends, const int *cnts, const int *hds, const int *firsts) {
    memcpy(r->ends, ends, sizeof r->ends);
    memcpy(r->cnts, cnts, sizeof r->cnts);
    memcpy(r->hds, hds, sizeof r->hds);
    if (firsts) memcpy(r->first, firsts, sizeof r->first);
    else memset(r->first, 0, sizeof r->first);
}

/* bot.py's MonteCarloBot.search_play, from its deals on: every candidate cards[k] (our
 * hand, ascending) played on rows (ends, cnts, hds; with firsts, the professional
 * variant's rows in table order), deal after deal, with successive
 * halving at the shares cuts[0..ncuts) of the search. The search stops after
 * max_deals deals (> 0), or else once `spent` plus its own time reaches `budget`
 * seconds. base (NULL: our heads only), end, rank_heads and weights give the objective
 * (bot.py's standing).
 * totals[k] gets candidate k's total; kept[k] 1 for the candidates still in at the
 * end. Returns the number of deals, or -1 for arguments out of bounds. */
int mc_search_play(const int *ends, const int *cnts, const int *hds, const int *firsts, const int *cards, int ncards,
                   int nopp, const int *pool, int npool, const int *sizes, const int *known,
                   const double *greedy, const int *heads_of, const double *fill, int rollout_greedy,
                   const int *base, int end, double rank_heads, const double *weights, int max_deals, double budget,
                   double spent, double tick, const double *cuts, int ncuts, uint64_t seed, double *totals, int *kept) {
    Dealer dealer = {nopp, pool, npool, sizes, known, greedy};
    if (ncards < 1 || ncards > MAX_HAND || bad_dealer(&dealer, ncards) || bad_rows(ends, cnts, hds, firsts))
        return -1;
    for (int k = 0; k < ncards; k++)
        if (cards[k] < 1 || cards[k] > MAX_CARD || (k && cards[k] <= cards[k - 1])) return -1;
    Tables t = {heads_of, fill, firsts != NULL};
    Rows root;
    load_rows(&root, ends, cnts, hds, firsts);
    int active[MAX_HAND], nactive = ncards;
    for (int k = 0; k < ncards; k++) {
        active[k] = k;
        totals[k] = 0.0;
    }
    int seats = nopp + 1;
    Clock clock = {tick, 0.0, 0.0};
    clock.start = now_seconds(&clock);
    int cut = 0;
    uint64_t s = seed;
    static Deal d;
    int done = 0;
    double last = clock.start; /* the clock's last reading, before this deal */
    for (;;) {
        if (max_deals > 0) {
            if (done >= max_deals) break;
        } else if (done > 0) {
            last = now_seconds(&clock);
            if (spent + last - clock.start >= budget) break;
        }
        deal(&dealer, &d, &s);
        int now[MAX_SEATS], nnow = 0;
        for (int q = 0; q < d.nseq; q++)
            if (d.seqlen[q]) now[nnow++] = d.seq[q][0];
        Greedy g0;
        copy_greedy(&g0, &d.g, d.ngreedy);
        for (int o = 0; o < d.ngreedy; o++) {
            if (g0.glen[o]) {
                int card = pick(&root, g0.ghand[o], g0.glen[o], &t);
                remove_card(g0.ghand[o], &g0.glen[o], card);
                now[nnow++] = card;
            }
        }
        for (int a = 0; a < nactive; a++) {
            int k = active[a];
            Rows r = root;
            int hand[MAX_HAND], hsize = 0;
            for (int m = 0; m < ncards; m++)
                if (m != k) hand[hsize++] = cards[m];
            Greedy g;
            copy_greedy(&g, &g0, d.ngreedy);
            int heads[MAX_SEATS];
            memset(heads, 0, sizeof heads);
            int taken = playout(&r, cards[k], hand, hsize, now, nnow, &d, &g, ncards, rollout_greedy, &t, &s,
                                base ? heads : NULL);
            totals[k] += base ? standing(base, heads, seats, taken, end, rank_heads, weights) : taken;
        }
        done++;
        if (cut < ncuts) {
            double progress = max_deals > 0 ? (double)done / max_deals : (spent + last - clock.start) / budget;
            if (progress >= cuts[cut]) {
                cut++;
                if (nactive > 2) {
                    for (int i = 1; i < nactive; i++) { /* by total, then index */
                        int v = active[i], j = i - 1;
                        while (j >= 0 && (totals[active[j]] > totals[v] ||
                                          (totals[active[j]] == totals[v] && active[j] > v))) {
                            active[j + 1] = active[j];
                            j--;
                        }
                        active[j + 1] = v;
                    }
                    int keep = (nactive + 1) / 2;
                    nactive = keep < 2 ? 2 : keep;
                    sort_ints(active, nactive);
                }
            }
        }
    }
    memset(kept, 0, (size_t)ncards * sizeof(int));
    for (int a = 0; a < nactive; a++) kept[active[a]] = 1;
    return done;
}

/* bot.py's MonteCarloBot.search_row, from its deals on: each of nstarts positions (the
 * rows after taking one row, costs[k] heads, and placing the rest of the turn:
 * starts_* [nstarts][ROWS]) played out with our hand (ascending) on the same deals;
 * totals[k] the playouts' worth in all, the row's heads included (with base: their
 * standing). Stops as mc_search_play does; returns the number of deals, or -1. */
int mc_search_row(const int *starts_ends, const int *starts_cnts, const int *starts_hds, const int *starts_firsts,
                  const int *costs,
                  int nstarts, const int *hand, int hsize, int nopp, const int *pool, int npool, const int *sizes,
                  const int *known, const double *greedy, const int *heads_of, const double *fill,
                  int rollout_greedy, const int *base, int end, double rank_heads, const double *weights,
                  int max_deals, double budget, double spent, double tick, uint64_t seed, double *totals) {
    Dealer dealer = {nopp, pool, npool, sizes, known, greedy};
    if (nstarts < 1 || nstarts > ROWS || hsize < 1 || hsize > MAX_HAND || bad_dealer(&dealer, hsize)) return -1;
    for (int k = 0; k < nstarts; k++)
        if (bad_rows(starts_ends + ROWS * k, starts_cnts + ROWS * k, starts_hds + ROWS * k,
                     starts_firsts ? starts_firsts + ROWS * k : NULL) ||
            costs[k] < 0)
            return -1;
    for (int m = 0; m < hsize; m++)
        if (hand[m] < 1 || hand[m] > MAX_CARD || (m && hand[m] <= hand[m - 1])) return -1;
    Tables t = {heads_of, fill, starts_firsts != NULL};
    for (int k = 0; k < nstarts; k++) totals[k] = 0.0;
    Clock clock = {tick, 0.0, 0.0};
    clock.start = now_seconds(&clock);
    uint64_t s = seed;
    static Deal d;
    int done = 0;
    for (;;) {
        if (max_deals > 0) {
            if (done >= max_deals) break;
        } else if (done > 0 && spent + now_seconds(&clock) - clock.start >= budget) {
            break;
        }
        deal(&dealer, &d, &s);
        for (int k = 0; k < nstarts; k++) {
            Rows r;
            load_rows(&r, starts_ends + ROWS * k, starts_cnts + ROWS * k, starts_hds + ROWS * k,
                      starts_firsts ? starts_firsts + ROWS * k : NULL);
            int mine[MAX_HAND];
            memcpy(mine, hand, (size_t)hsize * sizeof(int));
            Greedy g;
            copy_greedy(&g, &d.g, d.ngreedy);
            int heads[MAX_SEATS];
            memset(heads, 0, sizeof heads);
            heads[0] = costs[k];
            int taken = costs[k] + playout(&r, 0, mine, hsize, NULL, 0, &d, &g, hsize, rollout_greedy, &t, &s,
                                           base ? heads : NULL);
            totals[k] += base ? standing(base, heads, nopp + 1, taken, end, rank_heads, weights) : taken;
        }
        done++;
    }
    return done;
}
