/*
 * batched contraction C[z][a][b] += A[z][a][c][d] B[z][d][c][b]: zacd,zdcb->zab, loop order zabcd
 * (double).
 */
void batched_tc_f64(int na, int nb, int nc, int nd, int nz, double C[nz][na][nb],
                    double A[nz][na][nc][nd], double B[nz][nd][nc][nb])
{
    for (int z = 0; z < nz; z++)
        for (int a = 0; a < na; a++)
            for (int b = 0; b < nb; b++)
                for (int c = 0; c < nc; c++)
                    for (int d = 0; d < nd; d++)
                        C[z][a][b] += A[z][a][c][d] * B[z][d][c][b];
}
