/*
 * batched gemm C[b] += A[b] B[b], loop order bijk (float).
 */
void bgemm_bijk_f32(int nb, int ni, int nj, int nk, float C[nb][ni][nj], float A[nb][ni][nk],
                    float B[nb][nk][nj])
{
    int b, i, j, k;

    for (b = 0; b < nb; b++)
        for (i = 0; i < ni; i++)
            for (j = 0; j < nj; j++)
                for (k = 0; k < nk; k++)
                    C[b][i][j] += A[b][i][k] * B[b][k][j];
}
