/*
 * 2mm with both products inside one row loop: the row of tmp is finished before it feeds D
 * (float).
 */
void two_mm_fused_rows_f32(int ni, int nj, int nk, int nl, float tmp[ni][nj], float A[ni][nk],
                           float B[nk][nj], float C[nj][nl], float D[ni][nl])
{
    int i, k, j;

    for (i = 0; i < ni; i++) {
        for (k = 0; k < nk; k++)
            for (j = 0; j < nj; j++)
                tmp[i][j] += A[i][k] * B[k][j];
        for (k = 0; k < nj; k++)
            for (j = 0; j < nl; j++)
                D[i][j] += tmp[i][k] * C[k][j];
    }
}
