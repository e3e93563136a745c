/*
 * gemm, jki order (column-major friendly) on global arrays. The trip counts
 * are global integers that the nest only reads, so they act as parameters.
 */
#define CAP 256

int n_rows, n_cols, n_inner;
double Cg[CAP][CAP], Ag[CAP][CAP], Bg[CAP][CAP];

void gemm_jki(void)
{
    for (int j = 0; j < n_cols; j++)
        for (int k = 0; k < n_inner; k++)
            for (int i = 0; i < n_rows; i++)
                Cg[i][j] += Ag[i][k] * Bg[k][j];
}
