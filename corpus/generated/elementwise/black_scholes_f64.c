#include <math.h>

/*
 * Black-Scholes call prices through local temporaries (log, sqrt, exp, erf) (double).
 */
void black_scholes_f64(int n, double r, double v, double S[n], double K[n], double tau[n],
                       double call[n])
{
    int i;

    for (i = 0; i < n; i++) {
        double sq = sqrt(tau[i]);
        double d1 = (log(S[i] / K[i]) + (r + 0.5 * v * v) * tau[i]) / (v * sq);
        double d2 = d1 - v * sq;
        call[i] = S[i] * 0.5 * (1.0 + erf(d1 * 0.7071067811865476))
            - K[i] * exp(-r * tau[i]) * 0.5 * (1.0 + erf(d2 * 0.7071067811865476));
    }
}
