/*
 * Kronecker-structured product Y = A X B^T written as one 4-deep nest: ac,bd,cd->ab, loop order
 * abcd (double).
 */
void kron_matvec_f64(int na, int nb, int nc, int nd, double C[na][nb], double A[na][nc],
                     double B[nb][nd], double X[nc][nd])
{
    for (int a = 0; a < na; a++)
        for (int b = 0; b < nb; b++)
            for (int c = 0; c < nc; c++)
                for (int d = 0; d < nd; d++)
                    C[a][b] += A[a][c] * B[b][d] * X[c][d];
}
