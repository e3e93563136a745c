/*
 * batched gemm overwriting C through a local accumulator (float)
 */
void bgemm_acc_f32(int nb, int ni, int nj, int nk, float C[nb][ni][nj], float A[nb][ni][nk],
                   float B[nb][nk][nj])
{
    int b, i, j, k;

    for (b = 0; b < nb; ++b)
        for (i = 0; i < ni; ++i)
            for (j = 0; j < nj; ++j) {
                float acc = 0.0f;
                for (k = 0; k < nk; ++k)
                    acc += A[b][i][k] * B[b][k][j];
                C[b][i][j] = acc;
            }
}
