/*
 * complex multiplication on split real/imaginary arrays (float).
 */
void complex_mul_f32(int n, float ar[n], float ai[n], float br[n], float bi[n], float cr[n],
                     float ci[n])
{
    int i;

    for (i = 0; i < n; i++) {
        cr[i] = ar[i] * br[i] - ai[i] * bi[i];
        ci[i] = ar[i] * bi[i] + ai[i] * br[i];
    }
}
