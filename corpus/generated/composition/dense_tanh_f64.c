#include <math.h>

/*
 * dense layer Y = tanh(X W + b) with an accumulator per output (double).
 */
void dense_tanh_f64(int ni, int nj, int nk, double Y[ni][nj], double X[ni][nk], double W[nk][nj],
                    double b[nj])
{
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++) {
            double acc = b[j];
            for (int k = 0; k < nk; k++)
                acc += X[i][k] * W[k][j];
            Y[i][j] = tanh(acc);
        }
}
