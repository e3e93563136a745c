/* Tensor contraction C[a][b] += A[a][c][d] * B[d][c][b] over the two inner indices. */
void contract_abcd(int na, int nb, int nc, int nd,
                   double C[na][nb], double A[na][nc][nd], double B[nd][nc][nb])
{
    int a, b, c, d;

    for (a = 0; a < na; a++)
        for (b = 0; b < nb; b++)
            for (c = 0; c < nc; c++)
                for (d = 0; d < nd; d++)
                    C[a][b] += A[a][c][d] * B[d][c][b];
}
