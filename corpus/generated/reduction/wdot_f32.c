/*
 * weighted dot product s += w[i] x[i] y[i] (float).
 */
float wdot_f32(int n, float w[n], float x[n], float y[n])
{
    float s = 0.0f;

    for (int i = 0; i < n; ++i)
        s += w[i] * x[i] * y[i];
    return s;
}
