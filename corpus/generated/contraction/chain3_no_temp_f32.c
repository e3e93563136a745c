/*
 * three-matrix chain without an intermediate, O(n^4): ac,cd,db->ab, loop order acdb (float).
 */
void chain3_no_temp_f32(int na, int nb, int nc, int nd, float C[na][nb], float A[na][nc],
                        float B[nc][nd], float E[nd][nb])
{
    for (int a = 0; a < na; a++)
        for (int c = 0; c < nc; c++)
            for (int d = 0; d < nd; d++)
                for (int b = 0; b < nb; b++)
                    C[a][b] += A[a][c] * B[c][d] * E[d][b];
}
